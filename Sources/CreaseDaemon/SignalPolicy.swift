#if canImport(Glibc)
import Glibc
#endif

/// What creased does with each signal, decided once for all of them, so that no signal
/// meets its default action (ending the process) and leaves the socket behind. SIGKILL and
/// SIGSTOP cannot be caught, and the crash signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
/// SIGABRT, SIGTRAP, SIGSYS) mean the process can no longer be trusted to run its loop: those
/// leave the socket, and the next creased on it finds no daemon answering and replaces it
/// (docs/daemon.md).
enum SignalPolicy {
    enum Response: Equatable {
        /// Stop accepting, push `shutdown`, flush, unlink the socket, exit 0.
        case shutdown
        /// Reopen the trace in a new file (as `trace rotate` does).
        case reopenTrace
        /// Say so in the log and go on: a stray `kill -USR1` must not end a 10-hour run.
        case logAndIgnore
    }

    /// Signals handled on the loop, with the name the log gives them.
    static let handled: [(signal: Int32, name: String, response: Response)] = [
        (SIGTERM, "SIGTERM", .shutdown), (SIGINT, "SIGINT", .shutdown), (SIGQUIT, "SIGQUIT", .shutdown),
        // A CPU-time limit's soft signal (LimitCPU=) comes before SIGKILL: leave cleanly while we can.
        (SIGXCPU, "SIGXCPU", .shutdown), (SIGPWR, "SIGPWR", .shutdown),
        (SIGHUP, "SIGHUP", .reopenTrace),
        (SIGUSR1, "SIGUSR1", .logAndIgnore), (SIGUSR2, "SIGUSR2", .logAndIgnore), (SIGALRM, "SIGALRM", .logAndIgnore),
        (SIGVTALRM, "SIGVTALRM", .logAndIgnore), (SIGPROF, "SIGPROF", .logAndIgnore), (SIGIO, "SIGIO", .logAndIgnore),
        (SIGSTKFLT, "SIGSTKFLT", .logAndIgnore),
    ]

    /// Ignored outright before anything else runs: a write to a peer that left fails with
    /// EPIPE, a trace write past RLIMIT_FSIZE with EFBIG (handled like a full disk), and no
    /// real-time signal (nothing here uses one) ends the process.
    static var ignored: [Int32] {
        [SIGPIPE, SIGXFSZ] + Array(__libc_current_sigrtmin()...__libc_current_sigrtmax())
    }

    /// The set of handled signals, blocked until the loop's handlers are in.
    static var handledSet: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for h in handled { sigaddset(&set, h.signal) }
        return set
    }
}
