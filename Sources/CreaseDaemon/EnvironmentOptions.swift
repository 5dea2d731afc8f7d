import CreaseDaemonCore
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

    public static func arguments(_ environment: [String: String]) throws(DaemonOptions.UsageError) -> [String] {
        var args: [String] = []
        for v in variables {
            guard let value = environment[v.name], !value.isEmpty else { continue }
            args += [v.flag, value]
        }
        for label in try words(environment[labelsVariable] ?? "", variable: labelsVariable) {
            args += ["--label", label]
        }
        return args
    }

    /// Splits at blanks as a shell does: `"…"` or `'…'` keep blanks inside a word
    /// (`site="Lab 3"` is one word, `site=Lab 3`), and a backslash keeps the next character.
    static func words(_ text: String, variable: String) throws(DaemonOptions.UsageError) -> [String] {
        var out: [String] = []
        var word = "", inWord = false
        var quote: Character?
        var escaped = false
        for c in text {
            if escaped { word.append(c); escaped = false; inWord = true; continue }
            if let q = quote {
                if c == q { quote = nil } else if c == "\\", q == "\"" { escaped = true } else { word.append(c) }
                continue
            }
            switch c {
            case " ", "\t", "\n":
                if inWord { out.append(word); word = ""; inWord = false }
            case "\"", "'": quote = c; inWord = true
            case "\\": escaped = true
            default: word.append(c); inWord = true
            }
        }
        if quote != nil || escaped {
            throw DaemonOptions.UsageError(description: "\(variable) has an unterminated quote or a backslash at its end: \(text)")
        }
        if inWord { out.append(word) }
        return out
    }

    public static let usage = """
        Environment (a rig's /etc/crease/NAME.conf under systemd; the command line wins):
          \(variables.map(\.name).joined(separator: ", "))
                                 the flag of the same name (CREASE_FSYNC=always is --fsync always)
          CREASE_LABELS          "KEY=VALUE KEY=VALUE": one --label per word; quote a value
                                 with blanks as a shell would (site="Lab 3")
          CREASE_SOCKET          the socket, when --socket is not given
        """
}
