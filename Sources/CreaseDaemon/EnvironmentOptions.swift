/// Settings from the environment, for a rig's configuration file (`/etc/crease/NAME.conf`,
/// read by systemd's `EnvironmentFile=`). They become flags placed before the command
/// line's, so a flag given on the command line wins. Empty values are ignored.
public enum EnvironmentOptions {
    /// Each variable and the flag it stands for.
    public static let variables: [(name: String, flag: String)] = [
        ("CREASE_APP", "--app"),
        ("CREASE_PROFILE", "--profile"),
        ("CREASE_BUDGET_US", "--budget-us"),
        ("CREASE_FSYNC", "--fsync"),
        ("CREASE_TRACE_ROTATE_BYTES", "--trace-rotate-bytes"),
        ("CREASE_TRACE_ROTATE_SECONDS", "--trace-rotate-seconds"),
        ("CREASE_TRACE_KEEP_BYTES", "--trace-keep-bytes"),
        ("CREASE_TRACE_KEEP_DAYS", "--trace-keep-days"),
    ]

    /// `CREASE_LABELS="rig=rig1 serial=F2LX"`: one `--label KEY=VALUE` per word.
    public static let labelsVariable = "CREASE_LABELS"

    public static func arguments(_ environment: [String: String]) -> [String] {
        var args: [String] = []
        for v in variables {
            guard let value = environment[v.name], !value.isEmpty else { continue }
            args += [v.flag, value]
        }
        for label in (environment[labelsVariable] ?? "").split(whereSeparator: { $0 == " " || $0 == "\t" }) {
            args += ["--label", String(label)]
        }
        return args
    }

    public static let usage = """
        Environment (a rig's /etc/crease/NAME.conf under systemd; the command line wins):
          \(variables.map(\.name).joined(separator: ", "))
                                 the flag of the same name (CREASE_FSYNC=always is --fsync always)
          CREASE_LABELS          "KEY=VALUE KEY=VALUE": one --label per word
          CREASE_SOCKET          the socket, when --socket is not given
        """
}
