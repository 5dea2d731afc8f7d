/// Where clients and the daemon find the socket: `--socket`, else `$CREASE_SOCKET`,
/// else `$XDG_RUNTIME_DIR/crease/creased.sock`, else `/run/crease/creased.sock`.
public enum SocketPath {
    public static func resolve(explicit: String?, environment env: [String: String]) -> String {
        if let p = explicit, !p.isEmpty { return p }
        if let p = env["CREASE_SOCKET"], !p.isEmpty { return p }
        if let d = env["XDG_RUNTIME_DIR"], !d.isEmpty { return "\(d)/crease/creased.sock" }
        return "/run/crease/creased.sock"
    }
}
