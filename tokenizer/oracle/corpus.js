// Builds the conformance corpus: hand-picked strings that cover the cases
// tokenizers get wrong, long lines, and deterministic random mixtures.
// The same seed always yields the same corpus.
"use strict";

function rng(seed) {
  // mulberry32: small, fast and stable across Node versions.
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const handPicked = [
  "",
  " ",
  "  ",
  "\n",
  "\n\n",
  "\t",
  "a",
  "Hello, world!",
  "Hello world",
  " Hello world",
  "Hello world ",
  "The quick brown fox jumps over the lazy dog.",
  "It's a beautiful day, isn't it? \"Yes,\" she said.",
  "Mr. O'Neil paid $1,234.56 on 2024-03-15 at 09:30 (UTC+2).",
  "e-mail: first.last+tag@example.com, url: https://example.org/path?q=1&r=2#frag",
  "naïve café résumé coöperate façade jalapeño Zürich Ångström",
  "ﬁ ﬂ ﬀ ﬃ ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ ① ② ㈱ ㍻ ½ ² ℃ ™",
  "e\u0301 vs \u00e9, a\u0308 vs \u00e4, Hangul \u1100\u1161 vs \uAC00",
  "日本語のテキストです。今日はいい天気ですね。",
  "東京都渋谷区、カタカナ、ひらがな、漢字、ｶﾀｶﾅ。",
  "我们今天去公园散步吧。中文分词很难。",
  "繁體中文與简体中文混合。",
  "한국어 문장입니다. 안녕하세요!",
  "مرحبا بالعالم! هذه جملة عربية.",
  "שלום עולם, זה משפט בעברית.",
  "नमस्ते दुनिया, यह हिंदी वाक्य है।",
  "สวัสดีชาวโลก นี่คือประโยคภาษาไทย",
  "Привет, мир! Это русское предложение.",
  "Γειά σου Κόσμε! Αυτή είναι μια ελληνική πρόταση.",
  "Tiếng Việt có dấu: Xin chào thế giới.",
  "Ελληνικά, Русский, 日本語, العربية, עברית mixed together.",
  "😀😃😄😁😆😅😂🤣",
  "👍🏻👍🏼👍🏽👍🏾👍🏿",
  "👨‍👩‍👧‍👦 family, 👩🏽‍💻 coder, 🏳️‍🌈 flag, 🧑‍🤝‍🧑 people",
  "🇯🇵🇺🇸🇫🇷🇩🇪🇬🇧 flags",
  "❤️ ♥ ☺️ ✔️ ✖ ⚠️ #️⃣ 1️⃣",
  "🫩 🥲 🩵 🗽⃢⃢🗿",
  "func main() {\n\tfmt.Println(\"hello\")\n}\n",
  "def f(x):\n    return x ** 2  # square\n",
  "for (let i = 0; i < n; i++) { sum += a[i]; }",
  "fn main() -> Result<(), Box<dyn Error>> { Ok(()) }",
  "#include <stdio.h>\nint main(void) { printf(\"%d\\n\", 42); return 0; }",
  "<div class=\"x\"><p>Hello <b>world</b></p><br/></div>",
  "<table><tr><td>1</td><td>2</td></tr></table>",
  "{\"key\": [1, 2, 3], \"nested\": {\"a\": null, \"b\": true}}",
  "SELECT * FROM users WHERE id = 1 AND name LIKE '%x%';",
  "$ ls -la | grep '^d' > out.txt 2>&1 && echo $?",
  "# Title\n\n## Subtitle\n\n- item 1\n- item 2\n  - nested\n\n1. first\n2. second\n",
  "| a | b |\n|---|---|\n| 1 | 2 |\n",
  "```go\nx := 1\n```",
  "**bold** _italic_ `code` ~~strike~~ [link](http://x.y) ![img](a.png)",
  "> quote\n> > nested quote",
  "line1\r\nline2\r\nline3",
  "\r\n\r\n",
  "a\rb",
  "tabs\t\tand\t\t\tmore\ttabs",
  "                                        forty spaces before",
  "trailing spaces                    ",
  "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n",
  "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t",
  " \n \n \t \r\n\t \u00a0 \u3000 \u2003 \u200b \ufeff",
  "<bos>",
  "<eos>",
  "<pad><unk><mask>",
  "<bos>Hello<eos>",
  "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n",
  "<|turn>user\nHi<turn|>\n<|turn>model\n",
  "<|think|> <|channel>thought\nhmm<channel|>",
  "<unused0><unused99><unused6241>",
  "<start_of_image><end_of_image><image_soft_token>",
  "<start_of_tur",
  "<<bos>>",
  "<bos<bos>>",
  "text<bos>text",
  " <bos> ",
  "<BOS> <Bos> < bos >",
  "[multimodal]",
  "<table><caption><thead><tbody><tr><th><td></td></th></tr></tbody></thead></caption></table>",
  "<h1>Title</h1><strong>x</strong><code>y</code>",
  "▁",
  "▁▁",
  "▁▁▁▁▁▁▁▁",
  "▁hello▁world",
  "a▁b ▁ c",
  "_ __ ___ snake_case_name",
  "\u2581\u2581 mixed ▁ and spaces  ▁▁  ",
  "<0x41><0xFF><0x00>",
  "<0x41>",
  "\uFFFD",
  "\uFFFD\uFFFD replacement chars \uFFFD",
  "Ã© mojibake Ã¼ber â€™quotesâ€\u009d",
  "\u0000\u0001\u0002\u001f\u007f control",
  "\uFFFE\uFFFF noncharacters \uFDD0",
  "\uE000\uF8FF private use \u{F0000}",
  "\u202Eright-to-left override\u202C and \u200Fmarks\u200E",
  "zero\u200bwidth\u200cjoiner\u200dthings",
  "𝓗𝓮𝓵𝓵𝓸 𝕨𝕠𝕣𝕝𝕕 𝟙𝟚𝟛",
  "𠀀𠀁𪛖 rare CJK extension B",
  "ᚠᛇᚻ᛫ᛒᛦᚦ runes",
  "Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇ zalgo",
  "0123456789",
  "3.14159265358979323846264338327950288419716939937510",
  "1,000,000 1.000.000 1 000 000 1e10 -0.5 +3",
  "v1.2.3-beta.4+build.5",
  "a b  c   d    e     f",
  "....,,,,;;;;::::!!!!????",
  "(((((nested)))))",
  "!@#$%^&*()_+-=[]{}|;':\",./<>?`~",
  "\\n \\t \\u0041 escaped",
  "https://www.example.com/a/b/c.html?x=1&y=2",
  "C:\\Users\\name\\Documents\\file.txt",
  "/usr/local/bin/go test ./... -run TestX -v",
  "CamelCaseWordsAndHTTPServerURLs",
  "ALL CAPS SENTENCE HERE",
  "MiXeD cAsE sEnTeNcE",
  "I'm, you're, they've, we'll, she'd, it's, don't",
  "“smart quotes” ‘single’ «guillemets» „German“",
  "em—dash en–dash minus − hyphen‐ ellipsis…",
  "• bullet · middle dot ° degree ± plus-minus × times ÷ divide",
  "∀x∈ℝ: x²≥0 ∑∫∂√∞≈≠≤≥",
  "Ω≈ç√∫˜µ≤≥÷ åß∂ƒ©˙∆˚¬…æ",
];

const words = {
  en: "the of and to in is that it was for on are as with his they at be this from have or by one had not but what all were when we there can an your which their said if do will each about how up out them then she many some so these would other into has more her two like him see time could no make than first been its who now people my made over did down only way find use may water long little very after words called just where most know".split(" "),
  ja: "日本 東京 今日 明日 天気 学校 先生 学生 電車 時間 仕事 会社 映画 音楽 料理 友達 家族 世界 言葉 問題 です ます した する ない ある いる から まで より ので けど".split(" "),
  zh: "我们 你们 他们 今天 明天 中国 北京 上海 学习 工作 时间 问题 朋友 家人 世界 语言 电脑 手机 喜欢 知道 因为 所以 但是 可以 没有 什么 这个 那个".split(" "),
  ar: "مرحبا العالم كتاب مدرسة بيت سيارة شمس قمر ماء خبز صديق عائلة وقت يوم ليلة كبير صغير جميل جديد قديم".split(" "),
  ru: "привет мир книга школа дом машина солнце луна вода хлеб друг семья время день ночь большой маленький красивый новый старый".split(" "),
  code: "func return if else for range var const type struct interface map chan go defer select case switch break continue import package nil true false err := != == <= >= && || ++ -- { } ( ) [ ] ; , . fmt.Println(x) os.Exit(1) self def class lambda None print() console.log()".split(" "),
};

const pools = [
  " ", " ", " ", "\n", "\t", "\r\n", "  ", "    ",
  "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789",
  "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
  "àáâãäåæçèéêëìíîïñòóôõöøùúûüýÿ", "αβγδεζηθικλμνξοπρστυφχψω", "абвгдежзийклмнопрстуфхцчшщъыьэюя",
  "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをん",
  "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲン",
  "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可",
  "ابتثجحخدذرزسشصضطظعغفقكلمنهوي", "אבגדהוזחטיכלמנסעפצקרשת", "กขคงจฉชซญดตถทนบปผพฟภมยรลวศษสหอฮ",
  "😀😂🥲😍🤔🙃😴🤖👍👎🙏💪🔥✨🎉❤️💔⭐🌍🍎🍕🚀⚽🎵",
  "\u200d\u200b\ufe0f\u0301\u0308\u20e3",
  "▁", "<", ">", "|", "<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>", "<unused1>", "<b>", "</td>",
  "\uFFFD", "\u00a0", "\u3000",
];

function pick(r, arr) {
  return arr[Math.floor(r() * arr.length)];
}

function randomChars(r, n) {
  let out = "";
  while ([...out].length < n) {
    const pool = pick(r, pools);
    if (pool.length <= 2 || pool.startsWith("<")) {
      out += pool;
    } else {
      out += pick(r, [...pool]);
    }
  }
  return out;
}

function randomSentence(r, lang, n) {
  const ws = words[lang];
  const sep = lang === "ja" || lang === "zh" ? "" : " ";
  const parts = [];
  for (let i = 0; i < n; i++) {
    let w = pick(r, ws);
    if (lang === "en" && r() < 0.1) w = w[0].toUpperCase() + w.slice(1);
    parts.push(w);
    if (r() < 0.08) parts.push(pick(r, [",", ".", "!", "?", ";", ":"]));
  }
  return parts.join(sep) + (r() < 0.5 ? "." : "");
}

function longLines(r) {
  const out = [];
  const tenK = 10 * 1024;
  let s = "";
  while (s.length < tenK) s += randomSentence(r, "en", 20) + " ";
  out.push(s);
  s = "";
  while (s.length < tenK / 2) s += randomSentence(r, "ja", 12);
  out.push(s);
  s = "";
  while (s.length < tenK) s += randomChars(r, 50);
  out.push(s);
  out.push(" ".repeat(tenK));
  out.push("\n".repeat(2000) + "x" + "\t".repeat(2000));
  out.push("a".repeat(tenK));
  out.push("▁".repeat(3000) + "end");
  out.push("😀".repeat(2500));
  out.push("0123456789".repeat(1024));
  s = "";
  while (s.length < tenK) s += pick(r, words.code) + pick(r, [" ", "\n", "\t", "", "  "]);
  out.push(s);
  s = "";
  while (s.length < tenK) s += "<start_of_turn>user\n" + randomSentence(r, "en", 10) + "<end_of_turn>\n";
  out.push(s);
  return out;
}

function buildCorpus(seed = 20260301) {
  const r = rng(seed);
  const out = [...handPicked, ...longLines(r)];
  const langs = Object.keys(words);
  for (let i = 0; i < 900; i++) {
    out.push(randomSentence(r, pick(r, langs), 1 + Math.floor(r() * 40)));
  }
  for (let i = 0; i < 900; i++) {
    out.push(randomChars(r, 1 + Math.floor(r() * (r() < 0.1 ? 600 : 80))));
  }
  for (let i = 0; i < 200; i++) {
    // Mixtures of sentences and markup in one string.
    const parts = [];
    const n = 1 + Math.floor(r() * 6);
    for (let j = 0; j < n; j++) {
      parts.push(r() < 0.5 ? randomSentence(r, pick(r, langs), 1 + Math.floor(r() * 15)) : randomChars(r, 1 + Math.floor(r() * 30)));
    }
    out.push(parts.join(pick(r, ["\n", " ", "\n\n", "\t", "", "  ", "\r\n"])));
  }
  return out;
}

// randomIDs returns id sequences for decode tests: runs of byte tokens
// (valid and invalid UTF-8), special tokens, ordinary tokens and ids the
// vocabulary does not have.
function randomIDs(seed, vocabSize, byteBase, count) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < count; i++) {
    const ids = [];
    const n = 1 + Math.floor(r() * 30);
    for (let j = 0; j < n; j++) {
      const k = r();
      if (k < 0.35) ids.push(byteBase + Math.floor(r() * 256));
      else if (k < 0.45) ids.push(Math.floor(r() * 110));
      else if (k < 0.5) ids.push(vocabSize + Math.floor(r() * 10));
      else ids.push(Math.floor(r() * vocabSize));
    }
    out.push(ids);
  }
  return out;
}

module.exports = { buildCorpus, randomIDs, rng };
