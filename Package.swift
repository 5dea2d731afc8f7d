// swift-tools-version:6.0
import PackageDescription

// Crease: a model of iPhone Duo's vertical bars, as a pure core and a thin daemon shell.
//
// CreaseCore   — pure, deterministic: JSON, events, manifest, state machine, layout engine.
// CreaseDaemonCore — the daemon's decisions as a reducer: pure, no libuv, no Glibc.
// CreaseSystem — bounded reads, safe writes, line framing, socket and trace names.
// CreaseDaemon — the imperative shell: libuv loop, Unix socket, subscribers, trace files.
// CreaseTools  — the `crease` subcommands (layout, replay, trace, bench, demo, ...).
// The event path crosses CreaseDaemon, CreaseDaemonCore and CreaseSystem once per line: their
// bodies are offered to the modules that call them, so the path inlines and specializes as
// when it was one module (without it a round trip cost 25 % more instructions; BENCHMARKS.md).
let crossModule: [SwiftSetting] = [.unsafeFlags(["-cross-module-optimization", "-Xfrontend", "-enable-cmo-everything"], .when(configuration: .release))]

let package = Package(
    name: "Crease",
    products: [
        .executable(name: "crease", targets: ["crease"]),
        .executable(name: "creased", targets: ["creased"]),
        .library(name: "CreaseCore", targets: ["CreaseCore"]),
        // A counting allocator the tests preload into a real creased (LD_PRELOAD): the event
        // path allocates nothing once warm (AllocationTests).
        .library(name: "CreaseMallocCounter", type: .dynamic, targets: ["CreaseMallocCounter"]),
    ],
    targets: [
        .systemLibrary(
            name: "CLibUV",
            pkgConfig: "libuv",
            providers: [.apt(["libuv1-dev"])]
        ),
        // The core imports nothing (no Foundation); rounding needs libm.
        .target(name: "CreaseCore", linkerSettings: [.linkedLibrary("m")]),
        // The file, path and socket-name helpers the daemon and the CLI both use (bounded reads,
        // safe writes, line framing): system calls, no libuv.
        .target(name: "CreaseSystem", dependencies: ["CreaseCore"], swiftSettings: crossModule),
        // The daemon's decisions (a reducer over its inputs) and their pure policies: no libuv, no Glibc.
        .target(name: "CreaseDaemonCore", dependencies: ["CreaseCore"], swiftSettings: crossModule),
        // The seeded simulator: the real core, a virtual clock, simulated clients and disk (crease hunt).
        .target(name: "CreaseSimulation", dependencies: ["CreaseCore", "CreaseDaemonCore"]),
        .target(name: "CreaseDaemon", dependencies: ["CreaseCore", "CreaseDaemonCore", "CreaseSystem", "CLibUV"]),
        .target(name: "CreaseTools", dependencies: ["CreaseCore", "CreaseDaemonCore", "CreaseSimulation", "CreaseSystem", "CLibUV"]),
        .executableTarget(name: "crease", dependencies: ["CreaseTools"]),
        .executableTarget(name: "creased", dependencies: ["CreaseDaemon"]),
        // What more than one test target uses (polling with a deadline, the descriptor bystander), once.
        .target(name: "CreaseTestSupport", path: "Tests/TestSupport"),
        .target(name: "CreaseMallocCounter", path: "Tests/MallocCounter"),
        .testTarget(name: "CreaseCoreTests", dependencies: ["CreaseCore"]),
        .testTarget(name: "CreaseDaemonTests", dependencies: ["CreaseDaemon", "CreaseDaemonCore", "CreaseSystem", "CreaseCore", "CreaseTestSupport"]),
        .testTarget(name: "CreaseSimulationTests", dependencies: ["CreaseSimulation", "CreaseDaemonCore", "CreaseCore"]),
        .testTarget(name: "CreaseToolsTests", dependencies: ["CreaseTools", "CreaseDaemonCore", "CreaseSimulation", "CreaseSystem", "CreaseCore", "CreaseTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
