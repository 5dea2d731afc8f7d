/// The longest line the daemon takes by default (`--max-line-bytes` raises it for publishers'
/// loads): the framer cuts lines at it, and a read-only connection's lines never pass it.
public enum LineLimit {
    public static let standard = 64 * 1024
}
