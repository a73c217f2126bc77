package cli

import (
	"regexp"
	"strings"
	"testing"
)

// Without a terminal, orchard --demo answered its scripted question and
// ignored the one piped to it, and ignored invalid flags (--temp abc
// exited 0). Now every flag is checked first, and a piped question is
// answered as orchard run answers it: the same prompt, token for token.
func TestDemoWithoutATerminal(t *testing.T) {
	isolate(t)
	t.Setenv("ORCHARD_DEMO_PRESET", "tiny")
	promptTokens := regexp.MustCompile(`prompt tokens: +(\d+)`)
	const question = "Which apple keeps best through the winter, and why does it?"
	var out, errb strings.Builder
	if code := Main([]string{"--demo", "--family", "stateful3"}, strings.NewReader(question+"\n"), &out, &errb); code != 0 {
		t.Fatalf("piped question: exit %d\n%s", code, errb.String())
	}
	demo := promptTokens.FindStringSubmatch(errb.String())
	code, _, stderr := runCmd(t, "run", "--demo", "--family", "stateful3", "--prompt", question, "--max-tokens", "2", "--stats")
	run := promptTokens.FindStringSubmatch(stderr)
	if code != 0 || demo == nil || run == nil || demo[1] != run[1] {
		t.Errorf("the demo's prompt (%v) is not orchard run's for the same question (%v)\n%s", demo, run, errb.String())
	}
	// Nothing piped: the scripted question, as before.
	code, _, stderr = runCmd(t, "--demo", "--family", "stateful3")
	if scripted := promptTokens.FindStringSubmatch(stderr); code != 0 || scripted == nil || scripted[1] == demo[1] {
		t.Errorf("no question: exit %d, prompt %v\n%s", code, scripted, stderr)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--demo", "--temp", "abc"}, `flag --temp: sampling.temperature: wrong type: want a number, got "abc"`},
		{[]string{"--demo", "--ngram-max", "0"}, "speculation.ngram_max"},
		{[]string{"--demo", "--continue"}, "--continue, --pick and --attach need a terminal"},
		{[]string{"--temp", "abc"}, `sampling.temperature: wrong type`},
	} {
		code, out, stderr := runCmd(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || out != "" {
			t.Errorf("orchard %s: exit %d, want 2 and %q:\n%s", strings.Join(c.args, " "), code, c.want, stderr)
		}
	}
}

// A flag typo is one line saying what is wrong, the flag probably meant
// (as unknown config keys do) and where the flags are listed; it printed
// the 84 lines of the chat's usage.
func TestFlagTyposAreOneLine(t *testing.T) {
	isolate(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--demo", "--tmep", "0.5"}, "orchard chat: unknown flag --tmep (did you mean --temp?); see orchard chat --help\n"},
		{[]string{"--modle", "x"}, "orchard chat: unknown flag --modle (did you mean --model?); see orchard chat --help\n"},
		{[]string{"run", "--promt", "hi"}, "orchard run: unknown flag --promt (did you mean --prompt?); see orchard run --help\n"},
		{[]string{"run", "--max-tokens", "many"}, "orchard run: invalid value \"many\" for flag --max-tokens: parse error; see orchard run --help\n"},
		{[]string{"run", "--prompt"}, "orchard run: flag --prompt needs a value; see orchard run --help\n"},
		{[]string{"serve", "--lisen", ":1"}, "orchard serve: unknown flag --lisen (did you mean --listen?); see orchard serve --help\n"},
		{[]string{"models", "--xyzzy"}, "orchard models: unknown flag --xyzzy; see orchard models --help\n"},
		{[]string{"bundle", "inspect", ".", "--jsn"}, "orchard bundle inspect: unknown flag --jsn (did you mean --json?); see orchard bundle inspect --help\n"},
	} {
		code, _, stderr := runCmd(t, c.args...)
		if code != 2 || stderr != c.want {
			t.Errorf("orchard %s: exit %d, stderr\n%q\nwant\n%q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
	// -h still lists the flags.
	if _, _, stderr := runCmd(t, "run", "-h"); !strings.Contains(stderr, "-max-tokens") {
		t.Errorf("run -h:\n%s", stderr)
	}
}
