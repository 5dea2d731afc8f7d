/// What `creased` calls itself (`hello`, every trace header): one version for the daemon and the CLI.
public enum DaemonInfo {
    public static let version = "0.1.0"
}
