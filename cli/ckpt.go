package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/orchard-llm/orchard/atomicfile"
	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/checkpoints"
	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/termsafe"
	"github.com/orchard-llm/orchard/tui"
)

const ckptUsage = `usage:
  orchard ckpt ls [--json]
  orchard ckpt show NAME [--json] [--verify]
  orchard ckpt rm NAME...
  orchard ckpt mv OLD NEW
  orchard ckpt export NAME FILE|-
  orchard ckpt import FILE|- [NAME]

The store is --dir DIR, else <data.dir>/checkpoints (--data-dir, config
file, ORCHARD_DATA_DIR; by default ~/.local/share/orchard/checkpoints).
Put -- before a name that starts with "-".
`

// runCkpt implements orchard ckpt. Exit codes: 0 ok, 1 runtime failure,
// 2 usage or invalid input (a bad or unknown name, a taken name, a damaged
// archive to import).
func runCkpt(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, "orchard ckpt: want ls, show, rm, mv, export or import\n\n"+ckptUsage)
		return exitUsage
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, ckptUsage)
		return exitOK
	case "ls", "list":
		return ckptLs(args, stdout, stderr)
	case "show":
		return ckptShow(args, stdout, stderr)
	case "rm":
		return ckptRm(args, stdout, stderr)
	case "mv":
		return ckptMv(args, stdout, stderr)
	case "export":
		return ckptExport(args, stdout, stderr)
	case "import":
		return ckptImport(args, stdout, stderr)
	}
	fmt.Fprintf(stderr, "orchard ckpt: unknown command %q\n\n%s", cmd, ckptUsage)
	return exitUsage
}

// ckptCmd is one subcommand's flags and the store they select.
type ckptCmd struct {
	name   string
	fs     *flag.FlagSet
	dir    *string
	config *config.Flags
	stderr io.Writer
}

func newCkptCmd(name string, stderr io.Writer) *ckptCmd {
	fs := flag.NewFlagSet("orchard ckpt "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, ckptUsage) }
	c := &ckptCmd{name: fs.Name(), fs: fs, stderr: stderr}
	c.dir = fs.String("dir", "", "checkpoint store `folder` (default <data.dir>/checkpoints)")
	c.config = config.RegisterFlags(fs, "data.dir")
	return c
}

// parse parses flags anywhere among the arguments; everything after "--"
// is positional, so names may start with "-".
func (c *ckptCmd) parse(args []string, min, max int) ([]string, bool) {
	var rest []string
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			break
		}
	}
	pos, err := parseFlags(c.fs, args)
	if err != nil {
		return nil, false
	}
	pos = append(pos, rest...)
	if len(pos) < min || max >= 0 && len(pos) > max {
		fmt.Fprintf(c.stderr, "%s: wrong number of arguments\n\n%s", c.name, ckptUsage)
		return nil, false
	}
	return pos, true
}

// start parses the positionals and opens the store; a nil store comes with
// the exit code.
func (c *ckptCmd) start(args []string, min, max int) (*checkpoints.Store, []string, int) {
	pos, ok := c.parse(args, min, max)
	if !ok {
		return nil, nil, exitUsage
	}
	s, code := c.open()
	return s, pos, code
}

// open opens the store: --dir, else the configured data folder's
// checkpoints/ (the same folder the chat uses).
func (c *ckptCmd) open() (*checkpoints.Store, int) {
	root := *c.dir
	if root == "" {
		cfg, err := config.Load(config.Options{Env: os.Getenv, Flags: c.config, Actions: tui.KeyNames()})
		if err != nil {
			return nil, configError(c.stderr, c.name, err)
		}
		if cfg.Data.Dir == "" {
			fmt.Fprintf(c.stderr, "%s: no data folder ($HOME is not set); use --dir\n", c.name)
			return nil, exitUsage
		}
		root = cfg.CheckpointsDir()
	}
	s, err := checkpoints.Open(root)
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: %v\n", c.name, err)
		return nil, exitFailure
	}
	for _, n := range s.Notices() {
		fmt.Fprintf(c.stderr, "%s: note: %s\n", c.name, n)
	}
	return s, exitOK
}

// fail prints err and returns its exit code; corrupt counts as invalid
// input when the damaged thing came from the user (an archive to import).
func (c *ckptCmd) fail(err error, corruptIsInput bool) int {
	// The store's import and export errors begin with the operation
	// ("import: …"); say it once.
	name := c.name
	if sub := strings.TrimPrefix(c.name, "orchard ckpt "); strings.HasPrefix(err.Error(), sub+":") || strings.HasPrefix(err.Error(), sub+" ") {
		name = "orchard ckpt"
	}
	fmt.Fprintf(c.stderr, "%s: %v\n", name, err)
	switch {
	case errors.Is(err, checkpoints.ErrInvalidName), errors.Is(err, checkpoints.ErrNotFound), errors.Is(err, checkpoints.ErrExists):
		return exitUsage
	case corruptIsInput && (errors.Is(err, checkpoints.ErrCorrupt) || errors.Is(err, checkpoints.ErrNewerVersion)):
		return exitUsage
	}
	return exitFailure
}

func ckptLs(args []string, stdout, stderr io.Writer) int {
	c := newCkptCmd("ls", stderr)
	asJSON := c.fs.Bool("json", false, "print JSON")
	s, _, code := c.start(args, 0, 0)
	if s == nil {
		return code
	}
	list, err := s.List()
	if err != nil {
		return c.fail(err, false)
	}
	if *asJSON {
		if list == nil {
			list = []checkpoints.Info{}
		}
		return ckptJSON(stdout, list)
	}
	if len(list) == 0 {
		fmt.Fprintf(stderr, "no checkpoints in %s\n", s.Root())
		return exitOK
	}
	rows := [][]string{{"NAME", "CREATED", "TURNS", "TOKENS", "SIZE", "BUNDLE"}}
	for _, i := range list {
		if i.Problem != "" {
			rows = append(rows, []string{i.Name, "-", "-", "-", "-", "unreadable: " + i.Problem})
			continue
		}
		rows = append(rows, []string{i.Name, i.Created.Local().Format("2006-01-02 15:04"), commas(i.Turns), commas(i.Tokens),
			ckptSize(i.Bytes), fmt.Sprintf("%s (%s %s)", i.Bundle, i.Family, ckptShort(i.BundleID))})
	}
	if err := writeTable(stdout, rows, 2, 3, 4); err != nil {
		return exitFailure
	}
	return exitOK
}

// ckptView is orchard ckpt show --json.
type ckptView struct {
	Name           string                       `json:"name"`
	Created        time.Time                    `json:"created"`
	OS             string                       `json:"os"`
	ComputeUnits   string                       `json:"compute_units"`
	OrchardVersion string                       `json:"orchard_version"`
	BundleName     string                       `json:"bundle_name"`
	Identity       bundle.Identity              `json:"identity"`
	CoreLLM        *checkpoints.CoreLLMIdentity `json:"corellm_identity,omitempty"`
	Conversation   checkpoints.Conversation     `json:"conversation"`
	Tokens         int                          `json:"tokens"`
	TokenSHA256    string                       `json:"token_sha256"`
	PendingNext    *int                         `json:"pending_next,omitempty"`
	Family         bundle.Family                `json:"family"`
	Position       int                          `json:"position"`
	Buffers        []ckptBufferView             `json:"buffers"`
	CacheBytes     int64                        `json:"cache_bytes"`
	Files          []checkpoints.FileSum        `json:"files"`
	Bytes          int64                        `json:"bytes"`
	Verified       *bool                        `json:"verified,omitempty"`
}

type ckptBufferView struct {
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
	DType string `json:"dtype"`
}

func ckptShow(args []string, stdout, stderr io.Writer) int {
	c := newCkptCmd("show", stderr)
	asJSON := c.fs.Bool("json", false, "print JSON")
	verify := c.fs.Bool("verify", false, "read every file and check its sha256")
	s, pos, code := c.start(args, 1, 1)
	if s == nil {
		return code
	}
	cp, err := s.Show(pos[0])
	if err != nil {
		return c.fail(err, false)
	}
	var verr error
	if *verify {
		verr = s.Verify(pos[0])
	}
	m := cp.Meta
	if *asJSON {
		v := ckptView{Name: m.Name, Created: m.Created, OS: m.OS, ComputeUnits: m.ComputeUnits, OrchardVersion: m.OrchardVersion,
			BundleName: m.BundleName, Identity: m.Identity, CoreLLM: m.CoreLLM, Conversation: cp.Conversation,
			Tokens: len(cp.Tokens), TokenSHA256: m.TokenSHA256, PendingNext: cp.Pending, Family: cp.Cache.Family,
			Position: cp.Cache.Position, Buffers: []ckptBufferView{}, CacheBytes: m.CacheBytes, Files: m.Files, Bytes: m.Bytes}
		for _, b := range cp.Cache.Buffers {
			v.Buffers = append(v.Buffers, ckptBufferView{b.Name, b.Shape, b.DType.String()})
		}
		if *verify {
			ok := verr == nil
			v.Verified = &ok
		}
		if code := ckptJSON(stdout, v); code != exitOK {
			return code
		}
	} else {
		// Every string here came from orchard.json, which may have been
		// imported from anyone: termsafe.Line shows escapes, never obeys them.
		q := termsafe.Line
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(w, "name:\t%s\n", q(m.Name))
		fmt.Fprintf(w, "created:\t%s\n", m.Created.Local().Format("2006-01-02 15:04:05 MST"))
		fmt.Fprintf(w, "bundle:\t%s (%s, %s sha256 %s, id %s)\n", q(m.BundleName), q(string(m.Identity.Family)), q(m.Identity.ConfigFile),
			q(ckptShort(m.Identity.ConfigSHA256)), q(ckptShort(m.Identity.ID)))
		fmt.Fprintf(w, "made on:\t%s, compute units %s, orchard %s\n", q(m.OS), q(ckptOr(m.ComputeUnits, "default")), q(m.OrchardVersion))
		thinking := "off"
		if cp.Conversation.Thinking {
			thinking = "on"
		}
		fmt.Fprintf(w, "conversation:\t%d turns, %d messages, thinking %s, system prompt of %d characters\n",
			cp.Conversation.Turns(), len(cp.Conversation.Messages), thinking, utf8.RuneCountInString(cp.Conversation.System))
		pending := "none"
		if cp.Pending != nil {
			pending = fmt.Sprint(*cp.Pending)
		}
		fmt.Fprintf(w, "tokens:\t%d committed (sha256 %s), pending next %s\n", len(cp.Tokens), ckptShort(m.TokenSHA256), pending)
		fmt.Fprintf(w, "cache:\t%s at position %d, %d buffers, %s\n", q(string(cp.Cache.Family)), cp.Cache.Position, len(cp.Cache.Buffers), ckptSize(m.CacheBytes))
		fmt.Fprintf(w, "on disk:\t%s in %d files\n", ckptSize(m.Bytes), len(m.Files)+1)
		if *verify && verr == nil {
			fmt.Fprintf(w, "verified:\tevery file matches its sha256\n")
		}
		w.Flush()
		fmt.Fprintln(stdout, "files:")
		for _, f := range m.Files {
			fmt.Fprintf(stdout, "  %-40s %12d  %s\n", q(f.Name), f.Bytes, q(ckptShort(f.SHA256)))
		}
		if len(cp.Conversation.Messages) > 0 {
			fmt.Fprintln(stdout, "messages:")
			for _, msg := range cp.Conversation.Messages {
				fmt.Fprintf(stdout, "  %-6s %s\n", q(msg.Role)+":", ckptLine(msg.Content, 72))
				for _, a := range msg.Media {
					fmt.Fprintf(stdout, "         %s %s, %s, sha256 %s\n", q(a.Kind), q(a.Name), ckptSize(a.Bytes), ckptShort(a.SHA256))
				}
			}
		}
	}
	if verr != nil {
		return c.fail(verr, false)
	}
	return exitOK
}

func ckptRm(args []string, stdout, stderr io.Writer) int {
	c := newCkptCmd("rm", stderr)
	s, names, code := c.start(args, 1, -1)
	if s == nil {
		return code
	}
	for _, name := range names {
		if err := s.Delete(name); err != nil {
			code = max(code, c.fail(err, false))
		}
	}
	return code
}

func ckptMv(args []string, stdout, stderr io.Writer) int {
	c := newCkptCmd("mv", stderr)
	s, pos, code := c.start(args, 2, 2)
	if s == nil {
		return code
	}
	if err := s.Rename(pos[0], pos[1]); err != nil {
		return c.fail(err, false)
	}
	return exitOK
}

func ckptExport(args []string, stdout, stderr io.Writer) int {
	c := newCkptCmd("export", stderr)
	s, pos, code := c.start(args, 2, 2)
	if s == nil {
		return code
	}
	name, out := pos[0], pos[1]
	if out == "-" {
		if err := s.Export(name, stdout); err != nil {
			return c.fail(err, false)
		}
		return exitOK
	}
	if _, err := os.Lstat(out); err == nil {
		fmt.Fprintf(stderr, "%s: %s exists; choose a new file so nothing is overwritten\n", c.name, out)
		return exitUsage
	}
	// A failed export leaves no partial archive that looks finished.
	if err := atomicfile.WriteFunc(out, func(w io.Writer) error { return s.Export(name, w) }); err != nil {
		return c.fail(err, false)
	}
	return exitOK
}

func ckptImport(args []string, stdout, stderr io.Writer) int {
	c := newCkptCmd("import", stderr)
	s, pos, code := c.start(args, 1, 2)
	if s == nil {
		return code
	}
	var r io.Reader = os.Stdin
	src := "standard input"
	if pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", c.name, err)
			return exitUsage
		}
		defer f.Close()
		r, src = f, pos[0]
	}
	want := ""
	if len(pos) == 2 {
		want = pos[1]
	}
	name, err := s.Import(r, want)
	if err != nil {
		return c.fail(fmt.Errorf("%s: %w", src, err), true)
	}
	fmt.Fprintln(stdout, termsafe.Line(name))
	return exitOK
}

func ckptJSON(w io.Writer, v any) int {
	if err := writeJSON(w, v); err != nil {
		return exitFailure
	}
	return exitOK
}

func ckptSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func ckptShort(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func ckptOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// ckptLine shows the start of a message on one line, escapes visible.
func ckptLine(s string, n int) string {
	s = termsafe.Line(strings.Join(strings.Fields(s), " "))
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
