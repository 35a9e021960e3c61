//! `ledgerctl completions SHELL` and `ledgerctl man`: shell completions (clap_complete) and
//! man pages (clap_mangen), generated from the command line's own definition.

use std::path::PathBuf;

use anyhow::Context;

#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// Write ledgerctl.1 and a page per subcommand (ledgerctl-tail.1, ...) into DIR.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The completion script for `a.shell`, on stdout.
pub fn completions(a: CompletionsArgs, mut cmd: clap::Command) -> anyhow::Result<i32> {
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "ledgerctl", &mut out);
    print!("{}", String::from_utf8_lossy(&out));
    Ok(0)
}

/// ledgerctl(1) on stdout, or every page into `--dir`.
pub fn man(a: ManArgs, cmd: clap::Command, json: bool) -> anyhow::Result<i32> {
    match a.dir {
        None => {
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut out)?;
            print!("{}", String::from_utf8_lossy(&out));
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("--dir {}: cannot create it", dir.display()))?;
            clap_mangen::generate_to(cmd, &dir)
                .with_context(|| format!("--dir {}: cannot write the pages", dir.display()))?;
            let mut pages: Vec<String> = std::fs::read_dir(&dir)?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("ledgerctl") && n.ends_with(".1"))
                .collect();
            pages.sort();
            if json {
                println!("{}", serde_json::json!({ "dir": dir, "pages": pages }));
            } else {
                println!("wrote {} man pages into {}", pages.len(), dir.display());
            }
        }
    }
    Ok(0)
}
