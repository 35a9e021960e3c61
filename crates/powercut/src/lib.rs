//! A FUSE pass-through for power-loss tests.
//!
//! [`PowerCutFs`] serves a backing directory. Namespace operations (create, mkdir, rename,
//! unlink, rmdir) reach the backing directory at once, but file data written through the mount
//! stays in memory, as pages, until the file is fsynced (or fdatasynced): only then is it
//! written to the backing file and synced there. [`Handle::cut`] "cuts the power": it drops
//! every page not yet synced (optionally keeping a random prefix of the last unsynced write: a
//! torn write), undoes the namespace operations no fsync has committed since, and from then on
//! every request fails with EIO until the file system is unmounted. What the backing directory
//! holds afterwards is what a disk would hold after losing power.
//!
//! Namespace operations follow a journalled file system such as ext4 (data=ordered): they are
//! committed in order, and any fsync or directory fsync commits all of them made before it.
//!
//! The backing directory stands for the disk: it is written, never synced, since the host itself
//! does not lose power in a test (and a real fsync per simulated one would only slow the test).

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, UNIX_EPOCH};

use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner,
    OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};

/// The unit in which unsynced data is held and dropped.
pub const PAGE: u64 = 4096;

/// No attribute or entry caching in the kernel: every size comes from here.
const TTL: Duration = Duration::ZERO;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("backing directory {0}: {1}")]
    Backing(PathBuf, io::Error),
    #[error("mount on {0}: {1} (mounting needs root or fusermount3, and /dev/fuse)")]
    Mount(PathBuf, io::Error),
}

/// What a cut dropped.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CutReport {
    /// Files that had unsynced data.
    pub files: usize,
    /// Unsynced pages dropped.
    pub pages_dropped: usize,
    /// Bytes of the last unsynced write that reached the backing file anyway (a torn write).
    pub torn_bytes: usize,
    /// Namespace operations undone (no fsync had committed them).
    pub namespace_undone: usize,
}

/// Counters, for reports.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    pub writes: u64,
    pub fsyncs: u64,
    pub pages_synced: u64,
}

/// Unsynced state of one file.
#[derive(Default)]
struct Dirty {
    /// The file's size as the mount shows it.
    len: u64,
    /// The backing file is valid below this offset (the smallest size since the last sync).
    low: u64,
    pages: BTreeMap<u64, Box<[u8]>>,
}

enum Undo {
    /// Created at this path: remove it.
    Created(PathBuf),
    /// Moved from `from` to `to`: move it back.
    Renamed { from: PathBuf, to: PathBuf },
    /// Unlinked from `path`, kept at `trash` until committed: put it back.
    Removed { path: PathBuf, trash: PathBuf },
}

struct State {
    backing: PathBuf,
    trash: PathBuf,
    trash_seq: u64,
    paths: HashMap<u64, PathBuf>,
    inos: HashMap<PathBuf, u64>,
    next_ino: u64,
    dirty: HashMap<u64, Dirty>,
    undo: Vec<Undo>,
    last_write: Option<(u64, u64, Vec<u8>)>,
    cut: bool,
    /// A broken disk, for negative controls: fsync succeeds and keeps nothing.
    lying_fsync: bool,
    stats: Stats,
}

/// The file system; mount it with [`mount`].
pub struct PowerCutFs {
    state: Arc<Mutex<State>>,
}

/// Controls a mounted [`PowerCutFs`]: cut the power, read counters.
#[derive(Clone)]
pub struct Handle {
    state: Arc<Mutex<State>>,
}

/// A mounted file system; unmounted when dropped.
pub struct Mounted {
    pub handle: Handle,
    session: Option<fuser::BackgroundSession>,
}

impl Mounted {
    /// Unmount and wait for the serving thread.
    pub fn unmount(mut self) -> io::Result<()> {
        match self.session.take() {
            Some(s) => s.umount_and_join(),
            None => Ok(()),
        }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if let Some(s) = self.session.take() {
            let _ = s.umount_and_join();
        }
    }
}

/// Serve `backing` on `mountpoint` (both directories must exist) on a thread of its own.
pub fn mount(backing: &Path, mountpoint: &Path) -> Result<Mounted, Error> {
    let fs = PowerCutFs::new(backing)?;
    let handle = fs.handle();
    let mut config = fuser::Config::default();
    config.mount_options = vec![
        fuser::MountOption::FSName("powercut".into()),
        fuser::MountOption::Subtype("powercut".into()),
    ];
    config.n_threads = Some(2);
    let session = fuser::spawn_mount(fs, mountpoint, &config)
        .map_err(|e| Error::Mount(mountpoint.to_path_buf(), e))?;
    Ok(Mounted {
        handle,
        session: Some(session),
    })
}

impl PowerCutFs {
    /// A file system over `backing`. Unlinked files wait in `<backing>.trash` until committed.
    pub fn new(backing: &Path) -> Result<PowerCutFs, Error> {
        let backing = fs::canonicalize(backing).map_err(|e| Error::Backing(backing.into(), e))?;
        let mut trash = backing.clone().into_os_string();
        trash.push(".trash");
        let trash = PathBuf::from(trash);
        if trash.exists() {
            fs::remove_dir_all(&trash).map_err(|e| Error::Backing(trash.clone(), e))?;
        }
        fs::create_dir_all(&trash).map_err(|e| Error::Backing(trash.clone(), e))?;
        let mut paths = HashMap::new();
        let mut inos = HashMap::new();
        paths.insert(INodeNo::ROOT.0, PathBuf::new());
        inos.insert(PathBuf::new(), INodeNo::ROOT.0);
        Ok(PowerCutFs {
            state: Arc::new(Mutex::new(State {
                backing,
                trash,
                trash_seq: 0,
                paths,
                inos,
                next_ino: 2,
                dirty: HashMap::new(),
                undo: Vec::new(),
                last_write: None,
                cut: false,
                lying_fsync: false,
                stats: Stats::default(),
            })),
        })
    }

    pub fn handle(&self) -> Handle {
        Handle {
            state: self.state.clone(),
        }
    }

    fn lock(&self) -> Result<MutexGuard<'_, State>, Errno> {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.cut { Err(Errno::EIO) } else { Ok(s) }
    }
}

impl Handle {
    /// Cut the power: drop everything not synced, keep `tear_seed.map(..)` a pseudo-random
    /// prefix of the last unsynced write, undo uncommitted namespace operations, and fail every
    /// request from now on. Cutting twice does nothing the second time.
    pub fn cut(&self, tear_seed: Option<u64>) -> CutReport {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.cut {
            return CutReport::default();
        }
        s.cut = true;
        let mut report = CutReport {
            files: s
                .dirty
                .values()
                .filter(|d| !d.pages.is_empty() || d.low < d.len)
                .count(),
            pages_dropped: s.dirty.values().map(|d| d.pages.len()).sum(),
            ..Default::default()
        };
        s.dirty.clear();
        if let (Some(seed), Some((ino, off, data))) = (tear_seed, s.last_write.take()) {
            let keep = (splitmix(seed) % (data.len() as u64 + 1)) as usize;
            if keep > 0
                && let Some(p) = s.paths.get(&ino).map(|p| s.backing_path(p))
                && let Ok(f) = OpenOptions::new().write(true).open(&p)
                && f.write_all_at(&data[..keep], off).is_ok()
            {
                report.torn_bytes = keep;
            }
        }
        while let Some(u) = s.undo.pop() {
            report.namespace_undone += 1;
            let r = match &u {
                Undo::Created(p) => {
                    let p = s.backing_path(p);
                    if p.is_dir() {
                        fs::remove_dir_all(&p)
                    } else {
                        fs::remove_file(&p)
                    }
                }
                Undo::Renamed { from, to } => fs::rename(s.backing_path(to), s.backing_path(from)),
                Undo::Removed { path, trash } => fs::rename(trash, s.backing_path(path)),
            };
            if let Err(e) = r {
                tracing::warn!("powercut: undoing a namespace operation: {e}");
            }
        }
        let _ = fs::remove_dir_all(&s.trash);
        report
    }

    /// Make every fsync from now on succeed without keeping anything: a disk that lies, for
    /// checking that a test notices lost acknowledged data.
    pub fn lie_about_fsync(&self) {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .lying_fsync = true;
    }

    pub fn is_cut(&self) -> bool {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).cut
    }

    pub fn stats(&self) -> Stats {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).stats
    }
}

/// SplitMix64: a seeded choice without a dependency.
pub fn splitmix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn errno(e: io::Error) -> Errno {
    Errno::from(e)
}

impl State {
    fn backing_path(&self, rel: &Path) -> PathBuf {
        if rel.as_os_str().is_empty() {
            self.backing.clone()
        } else {
            self.backing.join(rel)
        }
    }

    fn rel(&self, ino: INodeNo) -> Result<PathBuf, Errno> {
        self.paths.get(&ino.0).cloned().ok_or(Errno::ENOENT)
    }

    fn child(&self, parent: INodeNo, name: &OsStr) -> Result<PathBuf, Errno> {
        if name.as_bytes().contains(&b'/') || name == ".." || name == "." {
            return Err(Errno::EINVAL);
        }
        Ok(self.rel(parent)?.join(name))
    }

    fn ino_of(&mut self, rel: &Path) -> u64 {
        if let Some(i) = self.inos.get(rel) {
            return *i;
        }
        let i = self.next_ino;
        self.next_ino += 1;
        self.inos.insert(rel.to_path_buf(), i);
        self.paths.insert(i, rel.to_path_buf());
        i
    }

    /// Forget the name `rel` (and, for a directory, every name under it).
    fn forget_path(&mut self, rel: &Path) {
        let gone: Vec<PathBuf> = self
            .inos
            .keys()
            .filter(|p| p.starts_with(rel))
            .cloned()
            .collect();
        for p in gone {
            if let Some(i) = self.inos.remove(&p) {
                self.paths.remove(&i);
            }
        }
    }

    /// Move the names under `from` to `to` (a rename).
    fn move_paths(&mut self, from: &Path, to: &Path) {
        let moved: Vec<(PathBuf, u64)> = self
            .inos
            .iter()
            .filter(|(p, _)| p.starts_with(from))
            .map(|(p, i)| (p.clone(), *i))
            .collect();
        for (p, i) in moved {
            self.inos.remove(&p);
            // (`join("")` would add a trailing '/', which makes a file's path ENOTDIR.)
            let rest = p.strip_prefix(from).expect("a prefix");
            let np = if rest.as_os_str().is_empty() {
                to.to_path_buf()
            } else {
                to.join(rest)
            };
            self.inos.insert(np.clone(), i);
            self.paths.insert(i, np);
        }
    }

    fn attr(&mut self, rel: &Path) -> Result<FileAttr, Errno> {
        let md = fs::symlink_metadata(self.backing_path(rel)).map_err(errno)?;
        let ino = self.ino_of(rel);
        let kind = if md.is_dir() {
            FileType::Directory
        } else if md.file_type().is_symlink() {
            FileType::Symlink
        } else {
            FileType::RegularFile
        };
        let size = self.dirty.get(&ino).map_or(md.len(), |d| d.len);
        let t = |s: i64, ns: i64| {
            UNIX_EPOCH + Duration::new(s.max(0) as u64, ns.clamp(0, 999_999_999) as u32)
        };
        Ok(FileAttr {
            ino: INodeNo(ino),
            size,
            blocks: size.div_ceil(512),
            atime: t(md.atime(), md.atime_nsec()),
            mtime: t(md.mtime(), md.mtime_nsec()),
            ctime: t(md.ctime(), md.ctime_nsec()),
            crtime: UNIX_EPOCH,
            kind,
            perm: (md.mode() & 0o7777) as u16,
            nlink: md.nlink() as u32,
            uid: md.uid(),
            gid: md.gid(),
            rdev: 0,
            blksize: PAGE as u32,
            flags: 0,
        })
    }

    /// The unsynced state of `ino`, made from the backing file on first use.
    fn dirty_mut(&mut self, ino: u64) -> Result<&mut Dirty, Errno> {
        if !self.dirty.contains_key(&ino) {
            let p = self.backing_path(&self.rel(INodeNo(ino))?);
            let len = fs::metadata(&p).map_err(errno)?.len();
            self.dirty.insert(
                ino,
                Dirty {
                    len,
                    low: len,
                    pages: BTreeMap::new(),
                },
            );
        }
        Ok(self.dirty.get_mut(&ino).expect("inserted"))
    }

    /// Page `n` of `ino` as the mount shows it (zeros past the end).
    fn page(&self, ino: u64, file: &File, n: u64) -> Result<Vec<u8>, Errno> {
        let mut buf = vec![0u8; PAGE as usize];
        let (low, len) = match self.dirty.get(&ino) {
            Some(d) => {
                if let Some(p) = d.pages.get(&n) {
                    return Ok(p.to_vec());
                }
                (d.low, d.len)
            }
            None => (u64::MAX, u64::MAX),
        };
        let start = n * PAGE;
        let end = ((n + 1) * PAGE).min(low).min(len);
        let mut got = 0usize;
        while start + (got as u64) < end {
            let want = (end - start) as usize;
            match file.read_at(&mut buf[got..want], start + got as u64) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(errno(e)),
            }
        }
        Ok(buf)
    }

    fn open_backing(&self, ino: u64, write: bool) -> Result<File, Errno> {
        let p = self.backing_path(&self.rel(INodeNo(ino))?);
        OpenOptions::new()
            .read(true)
            .write(write)
            .open(p)
            .map_err(errno)
    }

    fn read(&self, ino: u64, off: u64, size: u32) -> Result<Vec<u8>, Errno> {
        let f = self.open_backing(ino, false)?;
        let len = match self.dirty.get(&ino) {
            Some(d) => d.len,
            None => f.metadata().map_err(errno)?.len(),
        };
        let end = (off + size as u64).min(len);
        let mut out = Vec::with_capacity(end.saturating_sub(off) as usize);
        let mut pos = off;
        while pos < end {
            let n = pos / PAGE;
            let page = self.page(ino, &f, n)?;
            let a = (pos - n * PAGE) as usize;
            let b = ((end - n * PAGE).min(PAGE)) as usize;
            out.extend_from_slice(&page[a..b]);
            pos = n * PAGE + b as u64;
        }
        Ok(out)
    }

    fn write(&mut self, ino: u64, off: u64, data: &[u8]) -> Result<(), Errno> {
        let f = self.open_backing(ino, false)?;
        self.dirty_mut(ino)?;
        let mut pos = off;
        let end = off + data.len() as u64;
        while pos < end {
            let n = pos / PAGE;
            let mut page = self.page(ino, &f, n)?;
            let a = (pos - n * PAGE) as usize;
            let b = ((end - n * PAGE).min(PAGE)) as usize;
            page[a..b].copy_from_slice(&data[(pos - off) as usize..(pos - off) as usize + (b - a)]);
            let d = self.dirty.get_mut(&ino).expect("made above");
            d.pages.insert(n, page.into_boxed_slice());
            pos = n * PAGE + b as u64;
        }
        let d = self.dirty.get_mut(&ino).expect("made above");
        d.len = d.len.max(end);
        self.last_write = Some((ino, off, data.to_vec()));
        self.stats.writes += 1;
        Ok(())
    }

    fn truncate(&mut self, ino: u64, size: u64) -> Result<(), Errno> {
        let d = self.dirty_mut(ino)?;
        if size < d.len {
            d.low = d.low.min(size);
            let first_gone = size.div_ceil(PAGE);
            d.pages.retain(|n, _| *n < first_gone);
            if let Some(p) = d.pages.get_mut(&(size / PAGE)) {
                p[(size % PAGE) as usize..].fill(0);
            }
        }
        d.len = size;
        Ok(())
    }

    /// fsync: write the file's unsynced pages to the backing file; commit every
    /// namespace operation so far (a journal commit).
    fn sync(&mut self, ino: u64) -> Result<(), Errno> {
        if self.lying_fsync {
            self.stats.fsyncs += 1;
            return Ok(());
        }
        if let Some(d) = self.dirty.remove(&ino) {
            let f = self.open_backing(ino, true)?;
            let r = (|| -> io::Result<()> {
                if d.low < f.metadata()?.len() {
                    f.set_len(d.low)?;
                }
                for (n, page) in &d.pages {
                    let start = n * PAGE;
                    if start >= d.len {
                        continue;
                    }
                    let k = (d.len - start).min(PAGE) as usize;
                    f.write_all_at(&page[..k], start)?;
                }
                f.set_len(d.len)
            })();
            if let Err(e) = r {
                self.dirty.insert(ino, d);
                return Err(errno(e));
            }
            self.stats.pages_synced += d.pages.len() as u64;
            if matches!(self.last_write, Some((i, ..)) if i == ino) {
                self.last_write = None;
            }
        }
        self.commit_namespace()?;
        self.stats.fsyncs += 1;
        Ok(())
    }

    fn commit_namespace(&mut self) -> Result<(), Errno> {
        for u in self.undo.drain(..) {
            if let Undo::Removed { trash, .. } = u {
                let r = if trash.is_dir() {
                    fs::remove_dir_all(&trash)
                } else {
                    fs::remove_file(&trash)
                };
                r.map_err(errno)?;
            }
        }
        Ok(())
    }

    /// Unlink `rel`: move it into the trash until a commit, and record how to undo that.
    fn remove(&mut self, rel: &Path) -> Result<(), Errno> {
        let from = self.backing_path(rel);
        fs::symlink_metadata(&from).map_err(errno)?;
        self.trash_seq += 1;
        let trash = self.trash.join(self.trash_seq.to_string());
        fs::rename(&from, &trash).map_err(errno)?;
        // An open unlinked file keeps its data: follow it to the trash.
        // (an absolute path: `backing_path` keeps it as it is).
        if let Some(i) = self.inos.get(rel).copied() {
            self.forget_path(rel);
            self.paths.insert(i, trash.clone());
        }
        self.undo.push(Undo::Removed {
            path: rel.to_path_buf(),
            trash,
        });
        Ok(())
    }
}

impl Filesystem for PowerCutFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let r = self.lock().and_then(|mut s| {
            let rel = s.child(parent, name)?;
            s.attr(&rel)
        });
        match r {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        let r = self.lock().and_then(|mut s| {
            let rel = s.rel(ino)?;
            s.attr(&rel)
        });
        match r {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<std::time::SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<std::time::SystemTime>,
        _chgtime: Option<std::time::SystemTime>,
        _bkuptime: Option<std::time::SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let r = self.lock().and_then(|mut s| {
            let rel = s.rel(ino)?;
            if let Some(m) = mode {
                fs::set_permissions(s.backing_path(&rel), fs::Permissions::from_mode(m & 0o7777))
                    .map_err(errno)?;
            }
            if let Some(n) = size {
                s.truncate(ino.0, n)?;
            }
            s.attr(&rel)
        });
        match r {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        let r = self.lock().and_then(|mut s| {
            let rel = s.child(parent, name)?;
            let p = s.backing_path(&rel);
            fs::create_dir(&p).map_err(errno)?;
            let _ = fs::set_permissions(&p, fs::Permissions::from_mode(mode & !umask & 0o7777));
            s.undo.push(Undo::Created(rel.clone()));
            s.attr(&rel)
        });
        match r {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let r = self.lock().and_then(|mut s| {
            let rel = s.child(parent, name)?;
            let p = s.backing_path(&rel);
            let exists = p.exists();
            if exists && flags & libc::O_EXCL != 0 {
                return Err(Errno::EEXIST);
            }
            if !exists {
                OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&p)
                    .map_err(errno)?;
                let _ = fs::set_permissions(&p, fs::Permissions::from_mode(mode & !umask & 0o7777));
                s.undo.push(Undo::Created(rel.clone()));
            }
            let ino = s.ino_of(&rel);
            if flags & libc::O_TRUNC != 0 {
                s.truncate(ino, 0)?;
            }
            s.attr(&rel)
        });
        match r {
            Ok(a) => reply.created(
                &TTL,
                &a,
                Generation(0),
                FileHandle(0),
                FopenFlags::FOPEN_DIRECT_IO,
            ),
            Err(e) => reply.error(e),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.lock().and_then(|s| s.rel(ino)) {
            Ok(_) => reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO),
            Err(e) => reply.error(e),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        match self.lock().and_then(|s| s.read(ino.0, offset, size)) {
            Ok(d) => reply.data(&d),
            Err(e) => reply.error(e),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        match self.lock().and_then(|mut s| s.write(ino.0, offset, data)) {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(e),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // close() is not a sync: nothing becomes durable here.
        match self.lock() {
            Ok(_) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        match self.lock().and_then(|mut s| s.sync(ino.0)) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        match self.lock().and_then(|mut s| s.commit_namespace()) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let r = self.lock().and_then(|mut s| {
            let rel = s.child(parent, name)?;
            if fs::symlink_metadata(s.backing_path(&rel))
                .map_err(errno)?
                .is_dir()
            {
                return Err(Errno::EISDIR);
            }
            s.remove(&rel)
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let r = self.lock().and_then(|mut s| {
            let rel = s.child(parent, name)?;
            let p = s.backing_path(&rel);
            if !fs::symlink_metadata(&p).map_err(errno)?.is_dir() {
                return Err(Errno::ENOTDIR);
            }
            if fs::read_dir(&p).map_err(errno)?.next().is_some() {
                return Err(Errno::ENOTEMPTY);
            }
            s.remove(&rel)
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let r = self.lock().and_then(|mut s| {
            if !flags.is_empty() {
                return Err(Errno::EINVAL);
            }
            let from = s.child(parent, name)?;
            let to = s.child(newparent, newname)?;
            fs::symlink_metadata(s.backing_path(&from)).map_err(errno)?;
            if from == to {
                return Ok(());
            }
            if fs::symlink_metadata(s.backing_path(&to)).is_ok() {
                s.remove(&to)?;
            }
            fs::rename(s.backing_path(&from), s.backing_path(&to)).map_err(errno)?;
            s.move_paths(&from, &to);
            s.undo.push(Undo::Renamed { from, to });
            Ok(())
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let r = self.lock().and_then(|mut s| {
            let rel = s.rel(ino)?;
            let mut names: Vec<(u64, FileType, std::ffi::OsString)> = vec![
                (ino.0, FileType::Directory, ".".into()),
                (ino.0, FileType::Directory, "..".into()),
            ];
            let mut entries: Vec<_> = fs::read_dir(s.backing_path(&rel))
                .map_err(errno)?
                .filter_map(|e| e.ok())
                .collect();
            entries.sort_by_key(|e| e.file_name());
            for e in entries {
                let kind = match e.file_type() {
                    Ok(t) if t.is_dir() => FileType::Directory,
                    Ok(t) if t.is_symlink() => FileType::Symlink,
                    _ => FileType::RegularFile,
                };
                let i = s.ino_of(&rel.join(e.file_name()));
                names.push((i, kind, e.file_name()));
            }
            Ok(names)
        });
        match r {
            Ok(names) => {
                for (k, (i, kind, name)) in names.into_iter().enumerate().skip(offset as usize) {
                    if reply.add(INodeNo(i), k as u64 + 1, kind, &name) {
                        break;
                    }
                }
                reply.ok()
            }
            Err(e) => reply.error(e),
        }
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let r = self.lock().and_then(|s| {
            let c = std::ffi::CString::new(s.backing.as_os_str().as_bytes())
                .map_err(|_| Errno::EINVAL)?;
            // SAFETY: a valid NUL-terminated path and a zeroed out-parameter of the right type.
            let mut v: libc::statvfs = unsafe { std::mem::zeroed() };
            if unsafe { libc::statvfs(c.as_ptr(), &mut v) } != 0 {
                return Err(errno(io::Error::last_os_error()));
            }
            Ok(v)
        });
        match r {
            Ok(v) => reply.statfs(
                v.f_blocks,
                v.f_bfree,
                v.f_bavail,
                v.f_files,
                v.f_ffree,
                v.f_bsize as u32,
                v.f_namemax as u32,
                v.f_frsize as u32,
            ),
            Err(e) => reply.error(e),
        }
    }

    fn fallocate(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _offset: u64,
        _length: u64,
        _mode: i32,
        reply: ReplyEmpty,
    ) {
        reply.error(Errno::EOPNOTSUPP);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Mount a fresh backing directory (needs root or fusermount3, and /dev/fuse).
    fn mounted() -> (tempfile::TempDir, PathBuf, PathBuf, Mounted) {
        let dir = tempfile::tempdir().unwrap();
        let backing = dir.path().join("backing");
        let mnt = dir.path().join("mnt");
        fs::create_dir_all(&backing).unwrap();
        fs::create_dir_all(&mnt).unwrap();
        let m = mount(&backing, &mnt).expect("mount");
        (dir, backing, mnt, m)
    }

    #[test]
    fn a_cut_keeps_exactly_what_was_synced() {
        let (_dir, backing, mnt, m) = mounted();
        // synced: created, written and fsynced
        let mut a = File::create(mnt.join("a")).unwrap();
        a.write_all(&[1u8; 10_000]).unwrap();
        a.sync_all().unwrap();
        // then overwritten in part, extended, not synced
        a.write_all_at(&[2u8; 100], 50).unwrap();
        a.write_all(&[3u8; 5000]).unwrap();
        // the mount shows the new data, the backing file the synced data only
        let seen = fs::read(mnt.join("a")).unwrap();
        assert_eq!(seen.len(), 15_000);
        assert_eq!(&seen[50..150], &[2u8; 100][..]);
        assert_eq!(fs::read(backing.join("a")).unwrap(), vec![1u8; 10_000]);
        // a file created after the last fsync, and a rename after it
        fs::write(mnt.join("b"), b"never synced").unwrap();
        fs::rename(mnt.join("a"), mnt.join("c")).unwrap();
        // the renamed file, open or not, is still a file
        assert_eq!(a.metadata().unwrap().len(), 15_000);
        assert!(fs::metadata(mnt.join("c")).unwrap().is_file());
        let report = m.handle.cut(None);
        assert!(report.pages_dropped >= 3, "{report:?}");
        assert_eq!(report.namespace_undone, 2, "{report:?}");
        // every request fails after the cut
        assert!(fs::read(mnt.join("c")).is_err());
        drop(a);
        m.unmount().unwrap();
        assert_eq!(fs::read(backing.join("a")).unwrap(), vec![1u8; 10_000]);
        assert!(!backing.join("b").exists());
        assert!(!backing.join("c").exists());
    }

    #[test]
    fn a_lying_disk_keeps_nothing_after_fsync() {
        let (_dir, backing, mnt, m) = mounted();
        let f = File::create(mnt.join("f")).unwrap();
        f.sync_all().unwrap();
        m.handle.lie_about_fsync();
        f.write_all_at(b"acknowledged", 0).unwrap();
        f.sync_all().unwrap();
        m.handle.cut(None);
        drop(f);
        m.unmount().unwrap();
        assert_eq!(fs::read(backing.join("f")).unwrap(), b"");
    }

    #[test]
    fn truncate_then_extend_reads_zeros_and_syncs_them() {
        let (_dir, backing, mnt, m) = mounted();
        let f = OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(mnt.join("t"))
            .unwrap();
        f.write_all_at(&[7u8; 9000], 0).unwrap();
        f.sync_data().unwrap();
        f.set_len(100).unwrap();
        f.set_len(9000).unwrap();
        let mut want = vec![7u8; 100];
        want.resize(9000, 0);
        assert_eq!(fs::read(mnt.join("t")).unwrap(), want);
        assert_eq!(fs::read(backing.join("t")).unwrap(), vec![7u8; 9000]);
        f.sync_all().unwrap();
        assert_eq!(fs::read(backing.join("t")).unwrap(), want);
        drop(f);
        m.unmount().unwrap();
    }

    #[test]
    fn a_torn_write_keeps_a_prefix_of_the_last_unsynced_write() {
        let (_dir, backing, mnt, m) = mounted();
        let f = File::create(mnt.join("log")).unwrap();
        f.sync_all().unwrap();
        f.write_all_at(&[9u8; 3000], 0).unwrap();
        // a seed whose choice keeps part of the write
        let seed = (0..)
            .find(|s| (1..3000).contains(&(splitmix(*s) % 3001)))
            .unwrap();
        let report = m.handle.cut(Some(seed));
        let kept = (splitmix(seed) % 3001) as usize;
        assert_eq!(report.torn_bytes, kept);
        drop(f);
        m.unmount().unwrap();
        assert_eq!(fs::read(backing.join("log")).unwrap(), vec![9u8; kept]);
    }

    #[test]
    fn an_unlink_not_committed_comes_back_after_a_cut() {
        let (_dir, backing, mnt, m) = mounted();
        fs::create_dir(mnt.join("d")).unwrap();
        let f = File::create(mnt.join("d/x")).unwrap();
        f.write_all_at(b"kept", 0).unwrap();
        f.sync_all().unwrap();
        drop(f);
        fs::remove_file(mnt.join("d/x")).unwrap();
        assert!(!mnt.join("d/x").exists());
        m.handle.cut(None);
        m.unmount().unwrap();
        assert_eq!(fs::read(backing.join("d/x")).unwrap(), b"kept");
    }
}
