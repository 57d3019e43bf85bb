/**
 * Passwords, AWS secret keys and key-word-anchored secrets (issue 31): hand-labelled texts in
 * the styles people paste (chats, e-mails, tickets, configs, env files, shell history, logs).
 * Every labelled secret must be covered by one credentials span that reaches no further than
 * the value (surrounding quotes allowed); decoys must get no credentials span at all.
 */
import { describe, expect, it } from "vitest"
import { sanitizeText } from "../src/sanitize/text.js"

interface Case {
  readonly name: string
  readonly text: string
  readonly secrets: ReadonlyArray<string>
}

const AWS_1 = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
const AWS_2 = "9drTJvcXLB89EXAMPLEKEYabcdEfGhIjKlMnOpQr"
const AWS_3 = "7Hq2nR/xK9pLm4VbT8zW1cY5eJ3fA6gD0sU+iOoE"
const AWS_4 = "Xy7/Kq2Lm9Pn3Rs5Tv8Wz1Ab4Cd6Ef0GhIjKlMnO"
const AWS_5 = "Hk3/9LmQ2xZr8TpV5nWc1YbJ7dFs4GaE6uKo0iPq"
const AWS_6 = "q8Rz+3LmN0pV/7sKx2TbW5yHc9Fd4JgA1eUo6iYt"
const AWS_7 = "Tz4kP9qL2mX7vB1nC8rW3sY6dF5gH0jK+aE/uIoO"

const LABELLED: ReadonlyArray<Case> = [
  { name: "chat, password is", text: "hi, I can't log in to the staging box. my password is hunter2! can you reset it?", secrets: ["hunter2"] },
  { name: "chat, pwd colon", text: "try it with pwd: Tr0ub4dor&3 and tell me if it works", secrets: ["Tr0ub4dor&3"] },
  { name: "email, quoted passphrase", text: 'Hi Sam,\n\nThe wifi passphrase is "correct horse battery staple" (please don\'t share it).\n\nThanks,\nLena', secrets: ["correct horse battery staple"] },
  { name: "ini section", text: "[database]\nhost = db.internal\nuser = app\npassword = S3cure!Pass_2024\nport = 5432\n", secrets: ["S3cure!Pass_2024"] },
  { name: "toml quoted with space", text: '[postgres]\nuser = "reporting"\npassword = "p@ss w0rd with space"\n', secrets: ["p@ss w0rd with space"] },
  { name: "json object", text: '{"username": "svc-report", "password": "q9#LmV!2zR", "port": 5432}', secrets: ["q9#LmV!2zR"] },
  { name: "yaml spring datasource", text: "spring:\n  datasource:\n    username: admin\n    password: Wint3r-is-coming\n    url: jdbc:postgresql://db/app\n", secrets: ["Wint3r-is-coming"] },
  { name: "env file DB_PASSWORD", text: "DB_HOST=10.2.3.4\nDB_PASSWORD=kX7pQ2mN9vL\nDB_PORT=5432\n", secrets: ["kX7pQ2mN9vL"] },
  { name: "export SECRET_KEY", text: "# django\nexport SECRET_KEY='dj4ngo-s3cret-k3y-!x9#'\nexport DEBUG=0", secrets: ["dj4ngo-s3cret-k3y-!x9#"] },
  { name: "mysql -p quoted", text: "$ mysql -u root -p'R00t!pass' -h 127.0.0.1 shop < dump.sql", secrets: ["R00t!pass"] },
  { name: "script --password=", text: "ran ./backup.sh --user ops --password=Gr33nTea42 --host db1 at 03:00, exit code 0", secrets: ["Gr33nTea42"] },
  { name: "postgres url", text: "DATABASE_URL=postgres://app_user:n0tS0Secret@db.prod.internal:5432/app", secrets: ["n0tS0Secret"] },
  { name: "git clone url", text: "I cloned with `git clone https://deploy:ghx8Kq2Lm@git.example.org/team/repo.git` and it worked", secrets: ["ghx8Kq2Lm"] },
  { name: "redis url, empty user", text: "REDIS_URL=redis://:Sup3rR3dis@cache:6379/0", secrets: ["Sup3rR3dis"] },
  { name: "mongodb srv url", text: "uri: mongodb+srv://reporting:Rep0rt%21ng@cluster0.ab1cd.mongodb.net/?retryWrites=true", secrets: ["Rep0rt%21ng"] },
  { name: "aws credentials file", text: `[default]\naws_access_key_id = AKIAIOSFODNN7QX4R2PL\naws_secret_access_key = ${AWS_1}\nregion = eu-west-1\n`, secrets: ["AKIAIOSFODNN7QX4R2PL", AWS_1] },
  { name: "aws env export", text: `export AWS_ACCESS_KEY_ID=AKIAJ7Q3ZXPLMN4R2T8K\nexport AWS_SECRET_ACCESS_KEY="${AWS_2}"`, secrets: ["AKIAJ7Q3ZXPLMN4R2T8K", AWS_2] },
  { name: "aws prose secret access key", text: `Here's the secret access key for the backup user: ${AWS_3} (the id is in 1Password).`, secrets: [AWS_3] },
  { name: "aws slack pair", text: `creds for the s3 bucket -> AKIA2OGYBAH6Q3XYZ7PL / ${AWS_4}  pls rotate after the demo`, secrets: ["AKIA2OGYBAH6Q3XYZ7PL", AWS_4] },
  { name: "aws create-access-key json", text: `{\n  "AccessKey": {\n    "UserName": "ci",\n    "AccessKeyId": "AKIAQ3EGRTXK7N2M4P5W",\n    "Status": "Active",\n    "SecretAccessKey": "${AWS_5}"\n  }\n}`, secrets: ["AKIAQ3EGRTXK7N2M4P5W", AWS_5] },
  { name: "aws AWS_SECRET env", text: `AWS_SECRET=${AWS_6}\nAWS_REGION=us-east-1`, secrets: [AWS_6] },
  { name: "aws yaml nested", text: `aws:\n  access_key_id: AKIAZ5RTW2XQ9LMN3B7C\n  secret_access_key: ${AWS_7}\n`, secrets: ["AKIAZ5RTW2XQ9LMN3B7C", AWS_7] },
  { name: "terraform provider", text: `provider "aws" {\n  region     = "us-west-2"\n  access_key = "AKIAXK2P9RMZ4T7QWB3N"\n  secret_key = "${AWS_3}"\n}`, secrets: ["AKIAXK2P9RMZ4T7QWB3N", AWS_3] },
  { name: "api_key yaml", text: "mailer:\n  api_key: 4f9c2b7e8d1a6f3c5b0e9d2a7c4f1b8e\n  from: noreply@shop.test", secrets: ["4f9c2b7e8d1a6f3c5b0e9d2a7c4f1b8e"] },
  { name: "token in access log", text: '10.0.0.7 - - [12/Mar/2025:10:01:22 +0000] "GET /v1/export?format=csv&token=Zk29Lq7Xw3Vb8Nm4Pt6Ry1 HTTP/1.1" 200 512', secrets: ["Zk29Lq7Xw3Vb8Nm4Pt6Ry1"] },
  { name: "client_secret json", text: '{"client_id": "1234.apps.example", "client_secret": "GOCSPX-3kP9xQ7mZ2vL8rT4nW1s"}', secrets: ["GOCSPX-3kP9xQ7mZ2vL8rT4nW1s"] },
  { name: "python PRIVATE_KEY constant", text: 'PRIVATE_KEY = "5a8f3c1e9b7d2f4a6c8e0b1d3f5a7c9e2b4d6f8a"\nDEBUG = False', secrets: ["5a8f3c1e9b7d2f4a6c8e0b1d3f5a7c9e2b4d6f8a"] },
  { name: "prose webhook token", text: "FYI the authorization token for the webhook is 8d7f6e5a4b3c2d1e0f9a8b7c6d5e4f3a, it expires Friday.", secrets: ["8d7f6e5a4b3c2d1e0f9a8b7c6d5e4f3a"] },
  { name: "clinical portal note", text: "Pt called re portal lockout. Portal account reset; temp password: Blue!Sky77 — pt advised to change on first login. RN J. Ortiz", secrets: ["Blue!Sky77"] },
  { name: "email temporary password is:", text: "Welcome aboard!\nYour temporary password is: Xk4#mP9q\nYou will be asked to change it.", secrets: ["Xk4#mP9q"] },
  { name: "ticket pass is quoted", text: "User says her pass is 'letmein2024' but it keeps failing on the VPN.", secrets: ["letmein2024"] },
  { name: "passwd colon", text: "box: build-07\nlogin: jenkins\npasswd: Qw3rty!!\n", secrets: ["Qw3rty!!"] },
  { name: "docker compose env list", text: "environment:\n  - POSTGRES_USER=shop\n  - POSTGRES_PASSWORD=pg_Adm1n_77\n", secrets: ["pg_Adm1n_77"] },
  { name: "kubectl from-literal", text: "kubectl create secret generic db --from-literal=username=app --from-literal=password='Zx9!vB7@nM'", secrets: ["Zx9!vB7@nM"] },
  { name: "netrc", text: "machine api.example.com login bot password 9fH2kL7qP3", secrets: ["9fH2kL7qP3"] },
  { name: "router pw is", text: "ok the router admin pw is Falcon#1987 — change it after", secrets: ["Falcon#1987"] },
  { name: "SMTP_PASS env", text: "SMTP_HOST=smtp.mailgun.org\nSMTP_USER=postmaster\nSMTP_PASS=mailgun-8812-Kq\n", secrets: ["mailgun-8812-Kq"] },
  { name: "ado.net connection string", text: "Server=tcp:sql01,1433;Database=Orders;User Id=sa;Password=Y0urStr0ng!Pass;Encrypt=true", secrets: ["Y0urStr0ng!Pass"] },
  { name: "python connect kwargs", text: 'conn = psycopg2.connect(host="db", user="etl", password="etl#Load2023")', secrets: ["etl#Load2023"] },
  { name: "new password colon", text: "Done. New password: Maple&Syrup42. Let me know if it still fails.", secrets: ["Maple&Syrup42"] },
  { name: "prose client secret is", text: "the client secret is 9a8B7c6D5e4F3g2H1i0J, don't paste it in the channel again", secrets: ["9a8B7c6D5e4F3g2H1i0J"] },
  { name: "x-api-key header", text: "curl -H 'X-Api-Key: 3e1f0c2a9b8d7e6f5a4b3c2d1e0f9a8b' https://api.example.com/v2/orders", secrets: ["3e1f0c2a9b8d7e6f5a4b3c2d1e0f9a8b"] },
  { name: "aws secret colon prose", text: `aws secret: ${AWS_5}`, secrets: [AWS_5] },
  { name: "docker login -p quoted", text: "docker login -u deploy -p 'Dck3r!Hub2024' registry.example.com", secrets: ["Dck3r!Hub2024"] },
  { name: "mysql -p attached", text: "mysqldump -uroot -pS3cr3tRoot --all-databases > all.sql", secrets: ["S3cr3tRoot"] },
  { name: "php array", text: "'db' => [\n    'user' => 'wp',\n    'password' => 'wp!Sec0nd',\n],", secrets: ["wp!Sec0nd"] }
]

const DECOYS: ReadonlyArray<string> = [
  "Click the password reset link below to choose a new password. The link expires in 24 hours.",
  "Forgot your password? No problem, we'll e-mail you a new one.",
  "The password policy requires 12 characters, at least one digit and one symbol.",
  "database:\n  user: app\n  password: ********\n",
  "password = <your-password>\n",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal ${VAR} placeholder is the decoy
  "DB_PASSWORD=${DB_PASSWORD}\n",
  "Honestly the secret is patience, my friend.",
  "Passwords must be rotated every 90 days; the password field is required.",
  "docker run -d -p 8080:80 -p8443:443 nginx:1.27",
  "We passed the audit. Pass rate was 97% this quarter.",
  "Secret Santa: draw names by Friday!",
  "const password = req.body.password;\nconst user = await findUser(req.body.email)",
  "  password: process.env.DB_PASSWORD,\n  host: process.env.DB_HOST",
  "AWS docs say the secret access key is shown only once, when you create it.",
  "api_key: YOUR_API_KEY_HERE\ntoken: null",
  "Fixed in commit 3f9a1c2b7d8e4f5a6b7c8d9e0f1a2b3c4d5e6f7a (see the changelog).",
  "The key is to ship small, well-tested changes.",
  "secret_key_base is generated by rails credentials:edit",
  "Your password is incorrect. Please try again.",
  "Enter your password: \nPassword: [hidden]",
  "see http://localhost:3000/login?next=/password/reset for the form",
  "the password is case-sensitive and expires after 90 days",
  "password_min_length: 12\npassword_require_symbol: true"
]

const credentialSpans = (text: string) => sanitizeText(text, { policy: "default", mode: "flag" }).spans.filter((s) => s.library === "credentials")

/** Secrets found exactly (quotes around the value may be covered too), and spans reaching past a value. */
const judge = (c: Case) => {
  const spans = credentialSpans(c.text)
  const used = new Set<number>()
  const missed: Array<string> = []
  let from = 0
  for (const secret of c.secrets) {
    const start = c.text.indexOf(secret, from)
    if (start === -1) throw new Error(`${c.name}: "${secret}" is not in the text`)
    from = start + secret.length
    const end = start + secret.length
    const index = spans.findIndex(
      (s) => s.start <= start && s.end >= end && /^["'`]?$/.test(c.text.slice(s.start, start)) && /^["'`]?$/.test(c.text.slice(end, s.end))
    )
    if (index === -1) missed.push(secret)
    else used.add(index)
  }
  const extra = spans.filter((_, i) => !used.has(i)).map((s) => c.text.slice(s.start, s.end))
  return { missed, extra }
}

describe("secrets in sanitize", () => {
  it("prints recall and precision over the labelled texts and decoys", () => {
    let found = 0
    let total = 0
    let falsePositives = 0
    for (const c of LABELLED) {
      const { missed, extra } = judge(c)
      total += c.secrets.length
      found += c.secrets.length - missed.length
      falsePositives += extra.length
    }
    for (const text of DECOYS) falsePositives += credentialSpans(text).length
    console.log(`secrets: recall ${(found / total).toFixed(2)} (${found}/${total}), false positives ${falsePositives}`)
    expect(LABELLED.length).toBeGreaterThanOrEqual(40)
    expect(DECOYS.length).toBeGreaterThanOrEqual(15)
  })

  it.each(LABELLED.map((c) => [c.name, c] as const))("finds exactly the secret: %s", (_name, c) => {
    expect(judge(c)).toEqual({ missed: [], extra: [] })
  })

  it.each(DECOYS.map((text) => [text.slice(0, 60), text] as const))("leaves decoy alone: %s", (_name, text) => {
    expect(credentialSpans(text).map((s) => text.slice(s.start, s.end))).toEqual([])
  })

  it("redacts the value only: the key word stays", () => {
    const { clean } = sanitizeText("DB_PASSWORD=kX7pQ2mN9vL and postgres://app:n0tS0Secret@db/app", { policy: "default", mode: "redact" })
    expect(clean).toContain("DB_PASSWORD=")
    expect(clean).not.toContain("kX7pQ2mN9vL")
    expect(clean).toContain("postgres://app:")
    expect(clean).toContain("@db/app")
    expect(clean).not.toContain("n0tS0Secret")
  })

  it("stays fast on a long hostile line of key words and near-values", () => {
    const text = "password is password= pwd: secret_access_key AKIAIOSFODNN7EXAMPLE -p' -pX ://a:b ".repeat(6_000)
    const spans = credentialSpans(text)
    expect(Array.isArray(spans)).toBe(true)
  })
})
