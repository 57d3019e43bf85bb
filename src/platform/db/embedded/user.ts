/**
 * Which user the embedded PostgreSQL runs as. PostgreSQL refuses to run as
 * root, so a gateway running as root runs it as the `postgres` system user
 * (which must exist: we do not create users); otherwise it runs as ourselves.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { userInfo } from "node:os"

export const ROOT_FALLBACK_USER = "postgres"

export interface ServerUser {
  readonly name: string
  readonly uid: number
  readonly gid: number
  /** True when it is not the gateway's own user: files it owns must be chowned to it. */
  readonly switched: boolean
}

const idOf = (flag: "-u" | "-g", name: string): number =>
  Number.parseInt(execFileSync("id", [flag, name], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }), 10)

export const serverUser = (): ServerUser => {
  const me = userInfo()
  if (me.uid !== 0) return { name: me.username, uid: me.uid, gid: me.gid, switched: false }
  try {
    return { name: ROOT_FALLBACK_USER, uid: idOf("-u", ROOT_FALLBACK_USER), gid: idOf("-g", ROOT_FALLBACK_USER), switched: true }
  } catch (error) {
    throw new Error(
      `the gateway runs as root and PostgreSQL refuses to: it would run as the "${ROOT_FALLBACK_USER}" user, ` +
        `which could not be found (${(error as Error).message}). ` +
        `Create it (useradd --system ${ROOT_FALLBACK_USER}), run the gateway as an unprivileged user, or set DATABASE_URL.`
    )
  }
}

/** spawn() options that run a child as `user` (nothing when it is ourselves). */
export const runAs = (user: ServerUser): { uid?: number; gid?: number } => (user.switched ? { uid: user.uid, gid: user.gid } : {})

/** Whether `user` can enter `directory` (search permission on it and every directory above). */
export const canEnter = (user: ServerUser, directory: string): boolean =>
  spawnSync("/bin/sh", ["-c", 'cd "$1"', "sh", directory], { ...runAs(user), cwd: "/", stdio: "ignore" }).status === 0

/** Whether `user` can run `postgres` (reach it, execute it, and load its libraries). */
export const canRun = (user: ServerUser, postgres: string): boolean =>
  spawnSync(postgres, ["--version"], { ...runAs(user), cwd: "/", env: { PATH: "/usr/bin:/bin" }, stdio: "ignore", timeout: 30_000 }).status ===
  0

/**
 * Checks, as `user`, that it can enter `directory` and run `postgres`:
 * PostgreSQL's own message about either is far from the cause.
 */
export const checkAccess = (user: ServerUser, directory: string, postgres: string): void => {
  if (!user.switched || (canEnter(user, directory) && canRun(user, postgres))) return
  throw new Error(
    `PostgreSQL runs as user ${user.name} (uid ${user.uid}), which cannot enter ${directory} or cannot run ${postgres}: ` +
      "every directory above them needs search permission for that user (chmod o+x), or choose another DATA_DIR."
  )
}
