//! A running `lkpbot run` started by a test.

use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

/// A running bot, killed if the test ends (or fails) without stopping it,
/// so no daemon outlives its test.
pub struct Bot(Option<Child>);

impl Bot {
    pub fn new(child: Child) -> Bot {
        Bot(Some(child))
    }

    /// Stops the bot with SIGTERM, as a service manager does, and waits
    /// for it (at most 20 s) and its output.
    pub fn terminate(mut self) -> Output {
        let _ = Command::new("kill").args(["-TERM", &self.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "lkpbot did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
        self.0.take().expect("a running bot").wait_with_output().unwrap()
    }
}

impl std::ops::Deref for Bot {
    type Target = Child;
    fn deref(&self) -> &Child {
        self.0.as_ref().expect("a running bot")
    }
}

impl std::ops::DerefMut for Bot {
    fn deref_mut(&mut self) -> &mut Child {
        self.0.as_mut().expect("a running bot")
    }
}

impl Drop for Bot {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
