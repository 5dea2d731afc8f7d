#if canImport(Glibc)
import Glibc
#endif
import CreaseDaemon
import CreaseDaemonCore

// No Foundation: the daemon's resident memory is its own (BENCHMARKS.md, memory).

func fail(_ message: String, status: Int32) -> Never {
    let line = Array("creased: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(status)
}

/// The process's environment, from `environ` (the first value of a name repeated wins, as getenv's).
func processEnvironment() -> [String: String] {
    var out: [String: String] = [:]
    var p = environ
    while let entry = p.pointee {
        let text = String(cString: entry)
        if let eq = text.firstIndex(of: "="), out[String(text[..<eq])] == nil {
            out[String(text[..<eq])] = String(text[text.index(after: eq)...])
        }
        p += 1
    }
    return out
}

// A bad value from the environment is named as such, not as a flag nobody typed.
let environmentArguments: [String]
do {
    environmentArguments = try EnvironmentOptions.arguments(processEnvironment())
    _ = try DaemonOptions.parse(environmentArguments)
} catch {
    fail("in the environment (CREASE_*): \(error)", status: 2)
}

let options: DaemonOptions
do {
    switch try DaemonOptions.parse(environmentArguments + Array(CommandLine.arguments.dropFirst()), fromEnvironment: environmentArguments.count) {
    case .help:
        print(DaemonOptions.usage)
        exit(0)
    case .version:
        print("creased \(DaemonInfo.version)")
        exit(0)
    case .run(let o):
        options = o
    }
} catch {
    fail("\(error)\n\(DaemonOptions.usage)", status: 2)
}

do {
    let environment = processEnvironment()
    let traceDirectory = TraceDirectory.resolve(explicit: options.traceDirectory, environment: environment)
    // Fault injection for tests: every trace write takes this long.
    let slowDisk = environment["CREASE_TRACE_SLOW_DISK_MS"].flatMap { UInt32($0) }
    let files: any TraceFileSystem = slowDisk.map { SlowTraceFileSystem(delayMs: $0) } ?? PosixTraceFileSystem()
    let daemon = try Daemon(options: options, environment: environment) { context in
        try TraceWriter(context: context, options: options.traceWriter, directory: traceDirectory, files: files)
    }
    try daemon.run()
} catch {
    fail(error.description, status: 1)
}
exit(0)
