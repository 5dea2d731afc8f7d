import CreaseCore
import CreaseSystem
import CreaseDaemonCore

/// `--record-inputs PATH`: the shell's side of `DaemonRecording`. Every input the core is
/// given, the gauges among them, and every list of actions performed
/// is kept in memory, and the file is written when the daemon stops (through `OutputFile`,
/// so a device or a link is never replaced). A debugging aid, bounded: past `limit` bytes
/// recording stops and the file says so.
final class InputRecorder {
    static let limit = 256 << 20

    let path: String
    private var bytes: [UInt8] = []
    private(set) var stopped = false

    init(path: String) {
        self.path = path
        bytes.reserveCapacity(1 << 20)
    }

    func append(_ line: [UInt8]) {
        guard !stopped else { return }
        guard bytes.count + line.count < InputRecorder.limit else {
            stopped = true
            bytes += Array(#"{"stopped":"the recording reached its limit of 256 MiB"}"#.utf8)
            bytes.append(0x0A)
            return
        }
        bytes += line
        bytes.append(0x0A)
    }

    func write() throws(OutputFile.Failure) {
        try OutputFile.write(bytes, to: path)
    }
}
