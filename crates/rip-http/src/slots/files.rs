//! [`FileSlots`]: host schedules in files of a folder shared by processes, kept in
//! memory while one process is the folder's only user ([`super::users`]).

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{
    FILE_LEN, HOLD_PEEK_INTERVAL, MemorySlots, Schedule, SlotStore, lock, open_files, sole, us,
    users,
};

/// The schedule shared through files, for several processes: `<dir>/<host>` holds
/// `next last_start hold unanswered` in Unix microseconds, each padded to a fixed width
/// so that an update overwrites in place, read and written under `flock`.
///
/// While this process is the folder's only user, the schedules stay in its memory and
/// reach the files when another process arrives or this one ends (the
/// protocol is in the private module `slots::users`).
#[derive(Debug)]
pub struct FileSlots {
    folder: Arc<Folder>,
}

#[derive(Debug)]
struct Folder {
    dir: PathBuf,
    fallback: MemorySlots,
    /// host → (when the file was last read, its hold), for [`SlotStore::held_for`].
    peeks: Mutex<HashMap<String, (std::time::Instant, u64)>>,
    files: open_files::OpenFiles,
    users: Mutex<users::Users>,
    /// No host starts before a gap after this (Unix µs): [`users`]' floor.
    floor: u64,
    /// The schedules while this process is the folder's only user; `None` once it shares.
    sole: Mutex<Option<sole::Sole>>,
    /// Set once `sole` is `None` for good: updates go to the files without its lock.
    sharing: AtomicBool,
}

impl FileSlots {
    /// Keeps host files in `dir` (created when missing). Joins the folder's users
    /// (`slots::users`): as the sole user, it keeps the schedules in memory, and a thread
    /// looks every 5 ms whether another process wants to share them; otherwise this waits
    /// until the sole user there, if any, has written its schedules out.
    pub fn new(dir: impl Into<PathBuf>) -> std::io::Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        let (users, role) = users::Users::join(&dir, now_us);
        let sole = role == users::Role::Sole;
        let folder = Arc::new(Folder {
            dir,
            fallback: MemorySlots::default(),
            peeks: Mutex::new(HashMap::new()),
            files: open_files::OpenFiles::new(),
            floor: users.floor,
            users: Mutex::new(users),
            sole: Mutex::new(sole.then(sole::Sole::default)),
            sharing: AtomicBool::new(!sole),
        });
        if sole {
            let weak = Arc::downgrade(&folder);
            std::thread::Builder::new()
                .name("rip-host-users".into())
                .spawn(move || watch(weak))?;
        }
        Ok(Self { folder })
    }

    /// The file holding `host`'s schedule.
    pub fn path_for(&self, host: &str) -> PathBuf {
        self.folder.path_for(host)
    }

    /// Whether this process keeps the schedules in memory (the folder's only user).
    pub fn is_sole_user(&self) -> bool {
        !self.folder.sharing.load(Ordering::Acquire)
    }
}

/// Until `folder` is gone or shared: writes its schedules out when another process asks.
fn watch(folder: Weak<Folder>) {
    loop {
        std::thread::sleep(users::WATCH);
        let Some(folder) = folder.upgrade() else {
            return;
        };
        if lock(&folder.users).someone_waits() {
            folder.share();
            return;
        }
    }
}

impl Folder {
    fn path_for(&self, host: &str) -> PathBuf {
        self.dir.join(file_name(host))
    }

    /// Writes every schedule kept in memory to its file and shares the folder from now on.
    fn share(&self) {
        let mut sole = lock(&self.sole);
        let Some(kept) = sole.take() else {
            return;
        };
        self.write_out(kept.changed());
        if let Err(e) = lock(&self.users).share() {
            tracing::warn!("cannot share the host schedules' folder: {e}");
        }
        self.sharing.store(true, Ordering::Release);
    }

    fn write_out<'a>(&self, schedules: impl IntoIterator<Item = (&'a str, Schedule)>) {
        for (host, s) in schedules {
            if let Err(e) = self.update(host, |file, _| *file = s) {
                tracing::warn!(host, "cannot write the host schedule: {e}");
            }
        }
    }

    /// `f` on `host`'s schedule: in memory while the sole user, else in its file (under its lock).
    fn schedule<T>(
        &self,
        host: &str,
        f: impl FnOnce(&mut Schedule, u64) -> T,
    ) -> std::io::Result<T> {
        if !self.sharing.load(Ordering::Acquire) {
            let mut sole = lock(&self.sole);
            if let Some(kept) = sole.as_mut() {
                let now = now_us();
                let out = kept.make_room(now);
                self.write_out(out.iter().map(|(h, s)| (h.as_str(), *s)));
                let s = kept.schedule(host, || self.read_file(host));
                return Ok(f(s, now));
            }
        }
        self.update(host, f)
    }

    fn update<T>(&self, host: &str, f: impl FnOnce(&mut Schedule, u64) -> T) -> std::io::Result<T> {
        self.files.with(&self.path_for(host), |file| {
            file.lock()?;
            let result = (|| {
                let mut sched = self.floored(read(file)?);
                let before = sched;
                let ret = f(&mut sched, now_us());
                if sched != before {
                    let text = sched.render();
                    file.write_all_at(text.as_bytes(), 0)?;
                }
                Ok(ret)
            })();
            let _ = file.unlock();
            result
        })
    }

    /// `s` with the floor counted as a start (see [`users`]).
    fn floored(&self, mut s: Schedule) -> Schedule {
        s.last_start = s.last_start.max(self.floor);
        s
    }

    /// `f` on `host`'s schedule; `local` (this process's schedule) when its file cannot be
    /// used, with a warning.
    fn shared_or_local<T>(
        &self,
        host: &str,
        f: impl FnOnce(&mut Schedule, u64) -> T,
        local: impl FnOnce() -> T,
    ) -> T {
        self.schedule(host, f).unwrap_or_else(|e| {
            tracing::warn!(
                host,
                "cannot use the shared host schedule: {e}; using this process's"
            );
            local()
        })
    }

    /// The schedule as it stands: in memory while the sole user; else in `host`'s file, read
    /// without a lock (a torn read parses as "no constraint", and the commit, under the
    /// lock, has the last word).
    fn peek(&self, host: &str) -> Schedule {
        if !self.sharing.load(Ordering::Acquire)
            && let Some(kept) = lock(&self.sole).as_mut()
        {
            return *kept.schedule(host, || self.read_file(host));
        }
        self.read_file(host)
    }

    /// `host`'s file's schedule, floored; a host without a file yet has an empty schedule:
    /// nothing is created for a read.
    fn read_file(&self, host: &str) -> Schedule {
        let s = self
            .files
            .with_existing(&self.path_for(host), read)
            .unwrap_or_default();
        self.floored(s)
    }
}

impl Drop for Folder {
    /// The sole user that ends writes its schedules out for those who come after.
    fn drop(&mut self) {
        let kept = lock(&self.sole).take();
        if let Some(kept) = kept {
            self.write_out(kept.changed());
            if let Err(e) = lock(&self.users).leave() {
                tracing::warn!("cannot mark the host schedules written: {e}");
            }
        }
    }
}

impl SlotStore for FileSlots {
    fn reserve(&self, host: &str, gap: Duration) -> Duration {
        self.folder.reserve(host, gap)
    }

    fn commit(&self, host: &str, gap: Duration) -> Result<u64, Duration> {
        self.folder.commit(host, gap)
    }

    fn start_or_reserve(&self, host: &str, gap: Duration) -> Result<u64, Duration> {
        self.folder.start_or_reserve(host, gap)
    }

    fn push_back(&self, host: &str, wait: Duration) {
        self.folder.push_back(host, wait)
    }

    fn answered(&self, host: &str, started: u64) {
        self.folder.answered(host, started)
    }

    fn held_for(&self, host: &str) -> Duration {
        self.folder.held_for(host)
    }

    fn ready_in(&self, host: &str, gap: Duration) -> Duration {
        self.folder.ready_in(host, gap)
    }
}

/// The schedule in a host file. Files written before the fixed width may be shorter
/// (rewritten at full width, the rest ignored), never longer.
fn read(file: &File) -> std::io::Result<Schedule> {
    let mut buf = [0u8; FILE_LEN];
    let n = file.read_at(&mut buf, 0)?;
    Ok(Schedule::parse(&String::from_utf8_lossy(&buf[..n])))
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// A file name for a host key (`host` or `host:port`): safe characters kept, others `_`.
fn file_name(host: &str) -> String {
    let mut s: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(200)
        .collect();
    if s.is_empty() || s.starts_with('.') {
        s.insert(0, '_');
    }
    s
}

impl SlotStore for Folder {
    fn reserve(&self, host: &str, gap: Duration) -> Duration {
        self.shared_or_local(
            host,
            |s, now| Duration::from_micros(s.reserve(now, us(gap))),
            || self.fallback.reserve(host, gap),
        )
    }

    fn commit(&self, host: &str, gap: Duration) -> Result<u64, Duration> {
        self.shared_or_local(
            host,
            |s, now| s.commit(now, us(gap)).map_err(Duration::from_micros),
            || self.fallback.commit(host, gap),
        )
    }

    fn start_or_reserve(&self, host: &str, gap: Duration) -> Result<u64, Duration> {
        self.shared_or_local(
            host,
            |s, now| {
                s.start_or_reserve(now, us(gap))
                    .map_err(Duration::from_micros)
            },
            || self.fallback.start_or_reserve(host, gap),
        )
    }

    fn push_back(&self, host: &str, wait: Duration) {
        // Also here, so this process sees its own hold at once in `held_for`.
        self.fallback.push_back(host, wait);
        if let Err(e) = self.schedule(host, |s, now| {
            s.push_back(now, us(wait));
            0
        }) {
            tracing::warn!(host, "cannot update the shared host schedule: {e}");
        }
    }

    fn held_for(&self, host: &str) -> Duration {
        let now = now_us();
        if !self.sharing.load(Ordering::Acquire) {
            let hold = self.peek(host).hold;
            return Duration::from_micros(hold.saturating_sub(now))
                .max(self.fallback.held_for(host));
        }
        let cached = lock(&self.peeks)
            .get(host)
            .filter(|(at, _)| at.elapsed() < HOLD_PEEK_INTERVAL)
            .map(|(_, hold)| *hold);
        let hold = match cached {
            Some(h) => h,
            None => {
                let h = self.peek(host).hold;
                lock(&self.peeks).insert(host.to_owned(), (std::time::Instant::now(), h));
                h
            }
        };
        Duration::from_micros(hold.saturating_sub(now)).max(self.fallback.held_for(host))
    }

    fn ready_in(&self, host: &str, gap: Duration) -> Duration {
        let shared = self.peek(host).ready_in(now_us(), us(gap));
        Duration::from_micros(shared).max(self.fallback.ready_in(host, gap))
    }

    fn answered(&self, host: &str, started: u64) {
        if let Err(e) = self.schedule(host, |s, now| s.answered(now, started)) {
            tracing::warn!(host, "cannot update the shared host schedule: {e}");
            self.fallback.answered(host, started);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_slots_are_shared_between_instances() {
        let dir = tempfile::tempdir().unwrap();
        let a = FileSlots::new(dir.path()).unwrap();
        let b = FileSlots::new(dir.path()).unwrap();
        let g = Duration::from_secs(10);
        assert!(a.reserve("127.0.0.1:80", g) < Duration::from_millis(50));
        let w = b.reserve("127.0.0.1:80", g);
        assert!(w > Duration::from_secs(9), "{w:?}");
        b.push_back("h", Duration::from_secs(60));
        assert!(a.reserve("h", g) > Duration::from_secs(59));
        assert!(a.path_for("127.0.0.1:80").ends_with("127.0.0.1_80"));
    }

    /// Two users of `dir`'s schedules, so both keep them in the host files.
    fn sharing(dir: &std::path::Path) -> [FileSlots; 2] {
        let a = FileSlots::new(dir).unwrap();
        let b = FileSlots::new(dir).unwrap();
        assert!(!a.is_sole_user() && !b.is_sole_user());
        [a, b]
    }

    #[test]
    fn a_sole_user_keeps_schedules_in_memory_until_another_joins() {
        let dir = tempfile::tempdir().unwrap();
        let a = FileSlots::new(dir.path()).unwrap();
        assert!(a.is_sole_user());
        let g = Duration::from_secs(10);
        let first = a.commit("h", g).unwrap();
        a.reserve("held", Duration::ZERO);
        a.push_back("held", Duration::from_secs(60));
        assert!(!a.path_for("h").exists(), "a host file while the sole user");
        assert!(a.ready_in("h", g) > Duration::from_secs(9));
        // The newcomer waits until the first has written its schedules out.
        let b = FileSlots::new(dir.path()).unwrap();
        assert!(!a.is_sole_user() && !b.is_sole_user());
        assert!(a.path_for("h").exists() && a.path_for("held").exists());
        assert!(b.commit("h", g).is_err(), "b started within a's gap");
        assert!(b.reserve("held", g) > Duration::from_secs(59));
        a.answered("h", first);
        assert!(
            b.ready_in("h", g) > Duration::from_secs(9),
            "a gap from the answer"
        );
        // A host only read is not written.
        a.ready_in("only-read", g);
        assert!(!a.path_for("only-read").exists());
    }

    #[test]
    fn a_sole_user_that_ends_writes_its_schedules_for_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let a = FileSlots::new(dir.path()).unwrap();
        let g = Duration::from_secs(10);
        a.commit("h", g).unwrap();
        drop(a);
        let b = FileSlots::new(dir.path()).unwrap();
        assert!(b.is_sole_user(), "the first one is gone");
        assert!(b.reserve("h", g) > Duration::from_secs(9));
        assert!(
            b.reserve("other", g).is_zero(),
            "no floor after a clean end"
        );
    }

    #[test]
    fn after_a_sole_user_that_died_every_host_waits_a_gap() {
        let dir = tempfile::tempdir().unwrap();
        // What a sole user leaves when killed: its mark, and no host file.
        std::fs::write(
            dir.path().join(".users"),
            "A      12345                    0\n",
        )
        .unwrap();
        let a = FileSlots::new(dir.path()).unwrap();
        let g = Duration::from_secs(10);
        let w = a.reserve("never-asked", g);
        assert!(w > Duration::from_secs(9) && w <= g, "{w:?}");
        drop(a);
        // Kept for those who come after, also when sharing.
        let [b, _c] = sharing(dir.path());
        assert!(b.reserve("another", g) > Duration::from_secs(9));
        assert!(b.path_for("another").exists());
    }

    /// The access time of `path` after setting it a day back and reading it with `read`.
    fn atime_after(path: &std::path::Path, read: impl FnOnce()) -> (SystemTime, SystemTime) {
        let day_ago = SystemTime::now() - Duration::from_secs(86_400);
        let file = File::options().write(true).open(path).unwrap();
        file.set_times(std::fs::FileTimes::new().set_accessed(day_ago))
            .unwrap();
        drop(file);
        let before = std::fs::metadata(path).unwrap().accessed().unwrap();
        read();
        (before, std::fs::metadata(path).unwrap().accessed().unwrap())
    }

    #[test]
    fn reading_a_host_schedule_leaves_its_files_access_time_alone() {
        let dir = tempfile::tempdir().unwrap();
        let [slots, _other] = sharing(dir.path());
        slots.reserve("h", Duration::from_secs(1));
        let path = slots.path_for("h");
        // The precondition: on this file system a plain read does update an old atime (not
        // so when it is mounted `noatime`, and then there is nothing to show).
        let (before, after) = atime_after(&path, || {
            std::fs::read(&path).unwrap();
        });
        if before == after {
            eprintln!("skipped: reads do not update access times here");
            return;
        }
        let (before, after) = atime_after(&path, || {
            slots.ready_in("h", Duration::from_secs(1));
            slots.reserve("h", Duration::from_secs(1));
        });
        assert_eq!(before, after);
    }

    #[test]
    fn a_host_file_of_an_earlier_version_in_milliseconds_still_holds() {
        let ms_now = now_us() / 1000;
        let held = ms_now + 60_000;
        let dir = tempfile::tempdir().unwrap();
        let text = format!("{held} {ms_now} {held} 0\n");
        std::fs::write(dir.path().join("h"), text).unwrap();
        let slots = FileSlots::new(dir.path()).unwrap();
        let wait = slots.reserve("h", Duration::from_millis(100));
        let minute = Duration::from_secs(60);
        assert!(
            wait > minute - Duration::from_secs(1) && wait <= minute,
            "{wait:?}"
        );
        // Written back in microseconds, and read so again.
        let wait = slots.reserve("h", Duration::from_millis(100));
        assert!(
            wait > minute && wait <= minute + Duration::from_millis(100),
            "{wait:?}"
        );
    }

    #[test]
    fn another_process_waits_for_the_answer_too() {
        let dir = tempfile::tempdir().unwrap();
        let a = FileSlots::new(dir.path()).unwrap();
        let b = FileSlots::new(dir.path()).unwrap();
        let g = Duration::from_millis(20);
        let first = a.commit("h", g).unwrap();
        std::thread::sleep(Duration::from_millis(40));
        assert!(
            b.commit("h", g).is_err(),
            "b started while a's request is unanswered"
        );
        a.answered("h", first);
        std::thread::sleep(Duration::from_millis(25));
        assert!(b.commit("h", g).is_ok());
    }

    #[test]
    fn holds_are_seen_by_other_instances_without_a_lock() {
        let dir = tempfile::tempdir().unwrap();
        let a = FileSlots::new(dir.path()).unwrap();
        let b = FileSlots::new(dir.path()).unwrap();
        assert_eq!(b.held_for("h"), Duration::ZERO);
        a.push_back("h", Duration::from_secs(30));
        assert!(
            a.held_for("h") > Duration::from_secs(29),
            "at once in its own process"
        );
        std::thread::sleep(HOLD_PEEK_INTERVAL + Duration::from_millis(10));
        assert!(
            b.held_for("h") > Duration::from_secs(29),
            "within the peek interval elsewhere"
        );
    }

    #[test]
    fn a_file_of_the_earlier_unpadded_form_is_read_and_rewritten_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let [a, _b] = sharing(dir.path());
        // That form was in Unix milliseconds.
        let far = now_us() / 1000 + 60_000;
        std::fs::write(a.path_for("h"), format!("{far} 0 0\n")).unwrap();
        let w = a.reserve("h", Duration::from_secs(1));
        assert!(w > Duration::from_secs(59), "{w:?}");
        let text = std::fs::read_to_string(a.path_for("h")).unwrap();
        assert_eq!(text.len(), FILE_LEN);
        assert_eq!(Schedule::parse(&text).next, far * 1000 + 1_000_000);
    }

    #[test]
    fn a_torn_file_is_no_constraint() {
        let dir = tempfile::tempdir().unwrap();
        let a = FileSlots::new(dir.path()).unwrap();
        std::fs::write(a.path_for("h"), "garbage").unwrap();
        assert_eq!(a.reserve("h", Duration::from_secs(1)), Duration::ZERO);
    }

    #[test]
    fn ready_in_reads_the_schedule_without_reserving() {
        let dir = tempfile::tempdir().unwrap();
        let a = FileSlots::new(dir.path()).unwrap();
        let b = FileSlots::new(dir.path()).unwrap();
        let g = Duration::from_secs(10);
        assert_eq!(b.ready_in("h", g), Duration::ZERO, "a host never asked");
        assert_eq!(b.held_for("h"), Duration::ZERO);
        assert!(!b.path_for("h").exists(), "a read created the host's file");
        let first = a.commit("h", g).unwrap();
        // Another process sees the gap; reading twice reserves nothing.
        let w = b.ready_in("h", g);
        assert!(w > Duration::from_secs(9) && w <= g, "{w:?}");
        assert!(b.ready_in("h", g) <= w);
        a.answered("h", first);
        // A hold longer than the gap is what counts.
        a.push_back("h", Duration::from_secs(60));
        assert!(b.ready_in("h", g) > Duration::from_secs(59));
        assert!(b.ready_in("other", g).is_zero());
    }
}
