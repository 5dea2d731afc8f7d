import CreaseDaemonCore
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

/// The crash signals end the daemon whoever sends them. The Swift runtime's backtracer
/// catches them to print a crash report, and for one sent by another process (`kill -ABRT`,
/// systemd's watchdog) it then returned and the daemon kept serving. Ours runs first: a
/// signal sent from outside takes its default action (the process ends, with a core where
/// the system keeps them); a real fault goes on to the handler that was there before (the
/// backtracer), so a crash still gets its report.
enum CrashSignals {
    static let signals: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS]
    /// The handler each signal had before ours, in `signals`' order; written once, before
    /// the loop starts, and only read by the handler.
    nonisolated(unsafe) private static let previous: UnsafeMutablePointer<sigaction> = .allocate(capacity: signals.count)

    static func install() {
        for (i, s) in signals.enumerated() {
            var action = sigaction()
            action.__sigaction_handler.sa_sigaction = { signum, info, _ in
                guard let i = CrashSignals.signals.firstIndex(of: signum) else { return }
                // SI_USER, SI_QUEUE, SI_TKILL (<= 0): sent, not a fault. One we raised ourselves
                // (abort) still goes to the backtracer.
                let sent = info.map { $0.pointee.si_code <= 0 && $0.pointee._sifields._kill.si_pid != getpid() } ?? false
                if sent {
                    signal(signum, SIG_DFL)
                } else {
                    var old = CrashSignals.previous[i]
                    sigaction(signum, &old, nil)
                }
                // A fault re-runs its instruction and raises again by itself; a sent signal does not.
                if sent || (info?.pointee.si_code ?? 0) <= 0 { raise(signum) }
            }
            action.sa_flags = SA_SIGINFO | SA_ONSTACK
            sigemptyset(&action.sa_mask)
            sigaction(s, &action, previous + i)
        }
        // A mask inherited from the parent (a test runner's thread, a supervisor) must not hold
        // them back: a blocked SIGABRT would wait for ever.
        var set = sigset_t()
        sigemptyset(&set)
        for s in signals { sigaddset(&set, s) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}
