#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import CreaseSystem
import CreaseDaemonCore

/// Builds the engine the daemon starts with from `--app` and `--profile`.
enum EngineLoader {
    static func engine(app source: DaemonOptions.AppSource, profilePath: String?) throws(StartupError) -> Engine {
        let profile: DeviceProfile
        if let path = profilePath {
            do { profile = try Engine.loadProfile(json: try readFile(path, what: "profile", limit: InputFile.profileLimit)) } catch let e as InputError {
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
            do { app = try Engine.loadApp(json: try readFile(path, what: "app manifest", limit: InputFile.manifestLimit)) } catch let e as InputError {
                throw StartupError("app \(path): \(e)")
            } catch { throw StartupError("\(error)") }
        }
        return Engine(profile: profile, app: app)
    }

    static func readFile(_ path: String, what: String, limit: Int) throws(StartupError) -> [UInt8] {
        do { return try InputFile.read(path, what: what, limit: limit) } catch { throw StartupError(error.message) }
    }
}
