//! Is the data directory's filesystem one that keeps what an fsync promised?
//!
//! The pipeline acknowledges an event only after sled's flush and an fsync of sled's file
//! ([`crate::pipeline`]). That promise is only as good as the filesystem under the data directory:
//!
//! * tmpfs and ramfs live in memory, so a power cut loses everything;
//! * overlayfs is a container's writable layer, lost with the container (the data directory
//!   must be a volume);
//! * NFS, SMB, 9p, Ceph, GlusterFS and FUSE filesystems leave fsync to a server or a daemon;
//! * btrfs: sled 0.34's `sync_file_range` is unsafe on copy-on-write filesystems (sled issue
//!   #1351, `../shared/DEPENDENCIES.md` section 5);
//! * ext4 without its journal: fsync still writes the file's data and inode and flushes the
//!   device, but after a crash the filesystem's own metadata is only what fsck can repair;
//! * `nobarrier` / `barrier=0`: fsync no longer flushes the device's write cache.
//!
//! ext4 with its journal and xfs, both with barriers (their defaults), are what this ledger is
//! built and tested for. At startup ledgerd logs what it found; with
//! `store.require_safe_filesystem = true` it refuses to start on anything else, before it
//! creates or opens anything in the data directory.
//!
//! Linux only: the facts come from `/proc/self/mountinfo`, `/sys/dev/block` and ext4's
//! `/sys/fs/ext4/<device>/journal_task` (or `/proc/fs/jbd2`).

use std::path::{Component, Path, PathBuf};

/// One line of `/proc/self/mountinfo` (proc(5)), the fields this check needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Mount {
    /// Where it is mounted (escapes such as `\040` decoded).
    pub mount_point: PathBuf,
    /// Filesystem type, e.g. `ext4`, `tmpfs`, `fuse.sshfs`.
    pub fs_type: String,
    /// Mount source, e.g. `/dev/vda`.
    pub source: String,
    /// The device's major and minor numbers.
    pub device: (u32, u32),
    /// Per-mount options, then the filesystem's own (super) options.
    pub options: Vec<String>,
}

/// Whether an ext4 filesystem has its journal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Journal {
    Present,
    Absent,
    /// Not ext4, or the kernel did not say.
    Unknown,
}

/// What was found under a directory.
#[derive(Clone, Debug, PartialEq)]
pub struct Filesystem {
    pub mount: Mount,
    /// The block device's kernel name (`vda`, `sda1`, `dm-0`), when it has one.
    pub device_name: Option<String>,
    pub journal: Journal,
}

impl Filesystem {
    /// One line for the log: type, source, mount point, journal.
    pub fn describe(&self) -> String {
        let journal = match (self.mount.fs_type.as_str(), self.journal) {
            ("ext4", Journal::Present) => ", with its journal",
            ("ext4", Journal::Absent) => ", without a journal",
            ("ext4", Journal::Unknown) => ", journal unknown",
            _ => "",
        };
        format!(
            "{} on {} mounted at {}{journal}",
            self.mount.fs_type,
            self.mount.source,
            self.mount.mount_point.display()
        )
    }

    /// Why acknowledged entries might not survive a crash or power cut here; empty when this is
    /// a filesystem the ledger is built for.
    pub fn risks(&self) -> Vec<String> {
        let m = &self.mount;
        let t = m.fs_type.as_str();
        let mut out = Vec::new();
        match t {
            "ext4" | "xfs" => {}
            "tmpfs" | "ramfs" => out.push(format!(
                "{t} keeps files in memory: a power cut or reboot loses the whole ledger"
            )),
            "overlay" => out.push(
                "overlayfs is a container's writable layer, lost with the container: mount a \
                 volume (ext4 or xfs) at the data directory"
                    .into(),
            ),
            "btrfs" => out.push(
                "btrfs: sled 0.34's sync_file_range is unsafe on copy-on-write filesystems \
                 (sled issue #1351)"
                    .into(),
            ),
            _ if is_remote_or_fuse(t) => out.push(format!(
                "{t} leaves fsync to a server or a user-space daemon: durability is not the \
                 ledger's to promise"
            )),
            _ => out.push(format!(
                "{t} is not a filesystem this ledger is built and tested for (ext4 with its \
                 journal, or xfs)"
            )),
        }
        if t == "ext4" && self.journal == Journal::Absent {
            out.push(
                "ext4 without a journal: fsynced data reaches the disk, but after a crash the \
                 filesystem's own metadata is only what fsck can repair (tune2fs -O has_journal)"
                    .into(),
            );
        }
        if m.options
            .iter()
            .any(|o| o == "nobarrier" || o == "barrier=0")
        {
            out.push(format!(
                "{t} is mounted without write barriers: fsync does not flush the device's \
                 write cache"
            ));
        }
        out
    }
}

fn is_remote_or_fuse(t: &str) -> bool {
    matches!(
        t,
        "nfs"
            | "nfs4"
            | "cifs"
            | "smb3"
            | "smbfs"
            | "9p"
            | "ceph"
            | "glusterfs"
            | "fuse"
            | "fuseblk"
    ) || t.starts_with("fuse.")
}

/// Decode mountinfo's octal escapes (`\040` space, `\011` tab, `\012` newline, `\134` backslash).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            if let Ok(c) = u8::try_from(v) {
                out.push(c);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse `/proc/self/mountinfo`. Lines it cannot read are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Mount> {
    let f: Vec<&str> = line.split(' ').collect();
    let sep = f.iter().position(|x| *x == "-")?;
    if sep < 6 || f.len() < sep + 3 {
        return None;
    }
    let (major, minor) = f[2].split_once(':')?;
    let mut options: Vec<String> = f[5].split(',').map(String::from).collect();
    if let Some(sup) = f.get(sep + 3) {
        options.extend(sup.split(',').map(String::from));
    }
    Some(Mount {
        mount_point: PathBuf::from(unescape(f[4])),
        fs_type: unescape(f[sep + 1]),
        source: unescape(f[sep + 2]),
        device: (major.parse().ok()?, minor.parse().ok()?),
        options,
    })
}

/// The mount that holds `path` (absolute, no `..`): the longest mount point that is a prefix of
/// it, the last such in the table when several are (a later mount hides an earlier one).
pub fn mount_for<'a>(mounts: &'a [Mount], path: &Path) -> Option<&'a Mount> {
    let mut best: Option<&Mount> = None;
    for m in mounts {
        if path.starts_with(&m.mount_point)
            && best.is_none_or(|b| {
                m.mount_point.components().count() >= b.mount_point.components().count()
            })
        {
            best = Some(m);
        }
    }
    best
}

/// The nearest existing directory at or above `dir`, resolved: the data directory may not exist
/// yet, and is then created on the filesystem of this one.
fn existing_ancestor(dir: &Path) -> std::io::Result<PathBuf> {
    let abs = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir()?.join(dir)
    };
    let mut p = abs.as_path();
    loop {
        match p.canonicalize() {
            Ok(c) => return Ok(c),
            Err(e) => match p.parent() {
                Some(up) if p.components().next_back() != Some(Component::RootDir) => p = up,
                _ => return Err(e),
            },
        }
    }
}

/// Look at the filesystem that holds (or will hold) `dir`.
pub fn inspect(dir: &Path) -> Result<Filesystem, String> {
    let at = existing_ancestor(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let text = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    let mounts = parse_mountinfo(&text);
    let mount = mount_for(&mounts, &at)
        .ok_or_else(|| format!("no mount in /proc/self/mountinfo holds {}", at.display()))?
        .clone();
    let (major, minor) = mount.device;
    let device_name = std::fs::read_link(format!("/sys/dev/block/{major}:{minor}"))
        .ok()
        .and_then(|l| l.file_name().map(|n| n.to_string_lossy().into_owned()));
    let journal = match (&device_name, mount.fs_type.as_str()) {
        (Some(name), "ext4") => ext4_journal(name),
        _ => Journal::Unknown,
    };
    Ok(Filesystem {
        mount,
        device_name,
        journal,
    })
}

/// ext4 says whether it has a journal in `/sys/fs/ext4/<dev>/journal_task` (`<none>`, or the
/// journal thread's pid); older kernels only list journals in `/proc/fs/jbd2` (`<dev>-8`).
fn ext4_journal(name: &str) -> Journal {
    if let Ok(t) = std::fs::read_to_string(format!("/sys/fs/ext4/{name}/journal_task")) {
        return journal_from_task(&t);
    }
    match std::fs::read_dir("/proc/fs/jbd2") {
        Ok(rd) => {
            let prefix = format!("{name}-");
            if rd
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            {
                Journal::Present
            } else {
                Journal::Absent
            }
        }
        Err(_) => Journal::Unknown,
    }
}

fn journal_from_task(t: &str) -> Journal {
    match t.trim() {
        "<none>" => Journal::Absent,
        s if s.parse::<u32>().is_ok() => Journal::Present,
        _ => Journal::Unknown,
    }
}

/// The startup check: log what holds the data directory and why it may not keep acknowledged
/// entries; with `require` (`store.require_safe_filesystem`), refuse instead, naming the reasons.
pub fn check(dir: &Path, require: bool) -> anyhow::Result<()> {
    const KEY: &str = "store.require_safe_filesystem";
    match inspect(dir) {
        Ok(fs) => {
            let risks = fs.risks();
            if risks.is_empty() {
                tracing::info!(data_dir = %dir.display(), filesystem = %fs.describe(), "data directory filesystem");
                return Ok(());
            }
            if require {
                anyhow::bail!(
                    "refusing to keep the ledger in {} ({}), because {KEY} is true: {}",
                    dir.display(),
                    fs.describe(),
                    risks.join("; ")
                );
            }
            for r in &risks {
                tracing::warn!(data_dir = %dir.display(), filesystem = %fs.describe(), "{r}");
            }
            Ok(())
        }
        Err(e) if require => anyhow::bail!(
            "refusing to start, because {KEY} is true and the data directory's filesystem \
             cannot be checked: {e}"
        ),
        Err(e) => {
            tracing::warn!(data_dir = %dir.display(), "cannot check the data directory's filesystem: {e}");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683656k
50 27 8:17 / /srv/ledger\\040data rw,noatime shared:12 master:3 - xfs /dev/sdb1 rw,nobarrier
51 27 0:40 / /srv/ledger\\040data/nfs rw - nfs4 server:/export rw,vers=4.2
52 27 0:41 / /var/lib/casino-ledger rw - overlay overlay rw,lowerdir=/a,upperdir=/b
53 27 8:1 / /mnt rw - ext4 /dev/sda1 rw
54 27 8:2 / /mnt rw - btrfs /dev/sda2 rw
not a mountinfo line
";

    fn fs(t: &str, journal: Journal, options: &[&str]) -> Filesystem {
        Filesystem {
            mount: Mount {
                mount_point: "/data".into(),
                fs_type: t.into(),
                source: "/dev/x".into(),
                device: (8, 1),
                options: options.iter().map(|s| s.to_string()).collect(),
            },
            device_name: Some("x".into()),
            journal,
        }
    }

    #[test]
    fn mountinfo_lines_are_parsed_with_optional_fields_and_escapes() {
        let m = parse_mountinfo(MOUNTINFO);
        assert_eq!(m.len(), 7, "the malformed line is skipped");
        assert_eq!(
            m[0],
            Mount {
                mount_point: "/".into(),
                fs_type: "ext4".into(),
                source: "/dev/vda".into(),
                device: (254, 0),
                options: ["rw", "relatime", "rw", "discard", "resv_strict"]
                    .map(String::from)
                    .to_vec(),
            }
        );
        assert_eq!(m[2].mount_point, PathBuf::from("/srv/ledger data"));
        assert_eq!(m[2].fs_type, "xfs");
        assert_eq!(m[2].device, (8, 17));
        assert!(m[2].options.contains(&"nobarrier".to_string()));
        assert_eq!(unescape("a\\134b\\011c\\9"), "a\\b\tc\\9");
    }

    #[test]
    fn the_longest_and_latest_mount_point_holds_a_path() {
        let m = parse_mountinfo(MOUNTINFO);
        let at = |p: &str| mount_for(&m, Path::new(p)).map(|m| m.fs_type.as_str());
        assert_eq!(at("/var/lib/casino-ledger/store"), Some("overlay"));
        assert_eq!(at("/var/lib"), Some("ext4"));
        assert_eq!(at("/dev/shm/x"), Some("tmpfs"));
        assert_eq!(at("/dev/shmx"), Some("ext4"), "components, not characters");
        assert_eq!(at("/srv/ledger data/nfs/a"), Some("nfs4"));
        assert_eq!(at("/srv/ledger data/a"), Some("xfs"));
        assert_eq!(
            at("/mnt/a"),
            Some("btrfs"),
            "the later mount hides the earlier"
        );
        assert_eq!(mount_for(&m[1..2], Path::new("/etc")), None);
    }

    #[test]
    fn ext4_with_its_journal_and_xfs_are_safe_and_the_rest_says_why_not() {
        assert!(fs("ext4", Journal::Present, &["rw"]).risks().is_empty());
        assert!(fs("ext4", Journal::Unknown, &["rw"]).risks().is_empty());
        assert!(fs("xfs", Journal::Unknown, &["rw"]).risks().is_empty());
        let one = |t: &str, j: Journal, o: &[&str]| {
            let r = fs(t, j, o).risks();
            assert_eq!(r.len(), 1, "{t}: {r:?}");
            r[0].clone()
        };
        assert!(one("ext4", Journal::Absent, &[]).contains("without a journal"));
        assert!(one("tmpfs", Journal::Unknown, &[]).contains("in memory"));
        assert!(one("ramfs", Journal::Unknown, &[]).contains("in memory"));
        assert!(one("overlay", Journal::Unknown, &[]).contains("volume"));
        assert!(one("btrfs", Journal::Unknown, &[]).contains("#1351"));
        for t in ["nfs4", "cifs", "9p", "fuse.sshfs", "fuseblk"] {
            assert!(one(t, Journal::Unknown, &[]).contains("server"), "{t}");
        }
        assert!(one("zfs", Journal::Unknown, &[]).contains("not a filesystem"));
        assert!(one("xfs", Journal::Unknown, &["nobarrier"]).contains("barriers"));
        assert!(one("ext4", Journal::Present, &["barrier=0"]).contains("write cache"));
        assert_eq!(fs("ext4", Journal::Absent, &["nobarrier"]).risks().len(), 2);
    }

    #[test]
    fn the_journal_thread_says_whether_ext4_has_a_journal() {
        assert_eq!(journal_from_task("<none>\n"), Journal::Absent);
        assert_eq!(journal_from_task("412\n"), Journal::Present);
        assert_eq!(journal_from_task("?"), Journal::Unknown);
    }

    #[test]
    fn the_description_names_type_source_mount_point_and_journal() {
        assert_eq!(
            fs("ext4", Journal::Absent, &[]).describe(),
            "ext4 on /dev/x mounted at /data, without a journal"
        );
        assert_eq!(
            fs("xfs", Journal::Unknown, &[]).describe(),
            "xfs on /dev/x mounted at /data"
        );
    }

    #[test]
    fn a_directory_not_yet_created_is_checked_where_it_will_be() {
        let d = tempfile::tempdir().unwrap();
        let deep = d.path().join("a/b/c");
        assert_eq!(
            existing_ancestor(&deep).unwrap(),
            d.path().canonicalize().unwrap()
        );
        // This machine's own table: whatever holds the temporary directory is found.
        let found = inspect(&deep).unwrap();
        assert!(
            d.path()
                .canonicalize()
                .unwrap()
                .starts_with(&found.mount.mount_point)
        );
    }
}
