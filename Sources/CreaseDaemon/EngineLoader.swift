#if canImport(Glibc)
import Glibc
#endif
import CreaseCore

/// Builds the engine the daemon starts with from `--app` and `--profile`.
enum EngineLoader {
    static func engine(app source: DaemonOptions.AppSource, profilePath: String?) throws(StartupError) -> Engine {
        let profile: DeviceProfile
        if let path = profilePath {
            do { profile = try Engine.loadProfile(json: try readFile(path)) } catch let e as InputError {
                throw StartupError("profile \(path): \(e)")
            } catch { throw StartupError("\(error)") }
        } else {
            profile = Engine.builtinProfile
        }
        let app: App
        switch source {
        case .builtin(let name):
            guard let a = Engine.builtinApp(named: name) else {
                throw StartupError("no built-in app named \"\(name)\" (there are: \(BuiltinApps.names.joined(separator: ", ")))")
            }
            app = a
        case .file(let path):
            do { app = try Engine.loadApp(json: try readFile(path)) } catch let e as InputError {
                throw StartupError("app \(path): \(e)")
            } catch { throw StartupError("\(error)") }
        }
        return Engine(profile: profile, app: app)
    }

    static func readFile(_ path: String) throws(StartupError) -> [UInt8] {
        guard let f = fopen(path, "rb") else { throw StartupError("cannot open \(path): \(SocketSetup.errnoText())") }
        defer { fclose(f) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&chunk, 1, chunk.count, f)
            if n > 0 { out.append(contentsOf: chunk[0..<n]) }
            if n < chunk.count { break }
        }
        if ferror(f) != 0 { throw StartupError("cannot read \(path)") }
        return out
    }
}
