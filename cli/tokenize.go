package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/orchard-llm/orchard/tokenizer"
)

const cliUsage = `usage: orchard tokenize --tokenizer FILE [--decode] [--json] [--skip-special] [--bench]

Reads standard input one line at a time.
  default         each line is UTF-8 text; writes one JSON array of token ids per line
  --json          each input line is a JSON string (for text with newlines)
  --decode        each line is a JSON array of ids; writes the decoded text,
                  one line each (a JSON string per line with --json)
  --bench         encodes all input lines and prints tokens/s and MB/s
`

// tokenize is "orchard tokenize". It returns the process exit code:
// exitFailure on a runtime error (reading or writing), exitUsage on bad
// usage or bad input (a missing or invalid tokenizer file, a malformed
// line).
func tokenize(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tokenize", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	path := fs.String("tokenizer", "", "path to tokenizer.json")
	decode := fs.Bool("decode", false, "decode JSON id arrays to text")
	jsonLines := fs.Bool("json", false, "read (or, with --decode, write) JSON strings")
	skipSpecial := fs.Bool("skip-special", false, "with --decode, drop special tokens")
	bench := fs.Bool("bench", false, "measure encoding throughput on the input")
	usage := func(msg string) int {
		fmt.Fprintf(stderr, "orchard tokenize: %s\n%s", msg, cliUsage)
		return exitUsage
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, cliUsage)
			return exitOK
		}
		return usage(err.Error())
	}
	switch {
	case fs.NArg() > 0:
		return usage(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	case *path == "":
		return usage("--tokenizer is required")
	case *decode && *bench:
		return usage("--decode and --bench cannot be combined")
	}

	start := time.Now()
	tok, err := tokenizer.Load(*path)
	if err != nil {
		// The file the user named is missing or is no tokenizer: bad input.
		fmt.Fprintf(stderr, "orchard tokenize: %v\n", err)
		return exitUsage
	}
	loadTime := time.Since(start)

	out := bufio.NewWriter(stdout)
	defer out.Flush()
	in := bufio.NewReader(stdin)
	var lines []string
	for lineNo := 1; ; lineNo++ {
		line, err := in.ReadString('\n')
		if err != nil && err != io.EOF {
			fmt.Fprintf(stderr, "orchard tokenize: read input: %v\n", err)
			return exitFailure
		}
		if line == "" && err == io.EOF {
			break
		}
		line = strings.TrimSuffix(line, "\n")
		line = strings.TrimSuffix(line, "\r")
		if *decode {
			if err := decodeLine(tok, line, *jsonLines, *skipSpecial, out); err != nil {
				fmt.Fprintf(stderr, "orchard tokenize: line %d: %v\n", lineNo, err)
				return exitUsage // bad input
			}
		} else {
			text := line
			if *jsonLines {
				if err := json.Unmarshal([]byte(line), &text); err != nil {
					fmt.Fprintf(stderr, "orchard tokenize: line %d: not a JSON string: %v\n", lineNo, err)
					return exitUsage // bad input
				}
			}
			if *bench {
				lines = append(lines, text)
			} else {
				writeIDs(out, tok.Encode(text))
			}
		}
		if err == io.EOF {
			break
		}
	}
	if *bench {
		printBench(out, tok, lines, loadTime)
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintf(stderr, "orchard tokenize: write output: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func decodeLine(tok *tokenizer.Tokenizer, line string, jsonOut, skipSpecial bool, out *bufio.Writer) error {
	var ids []int
	if err := json.Unmarshal([]byte(line), &ids); err != nil {
		return fmt.Errorf("not a JSON array of ids: %w", err)
	}
	text := tok.Decode(ids, skipSpecial)
	if jsonOut {
		b, err := json.Marshal(text)
		if err != nil {
			return err
		}
		out.Write(b)
	} else {
		out.WriteString(text)
	}
	return out.WriteByte('\n')
}

func writeIDs(out *bufio.Writer, ids []int) {
	buf := make([]byte, 0, 8*len(ids)+2)
	buf = append(buf, '[')
	for i, id := range ids {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, int64(id), 10)
	}
	buf = append(buf, ']', '\n')
	out.Write(buf)
}

// printBench encodes the lines repeatedly for at least a second and
// reports the single-thread throughput.
func printBench(out io.Writer, tok *tokenizer.Tokenizer, lines []string, loadTime time.Duration) {
	bytes := 0
	for _, l := range lines {
		bytes += len(l)
	}
	var (
		tokens, rounds int
		elapsed        time.Duration
	)
	start := time.Now()
	for rounds == 0 || elapsed < time.Second {
		for _, l := range lines {
			tokens += len(tok.Encode(l))
		}
		rounds++
		elapsed = time.Since(start)
	}
	sec := elapsed.Seconds()
	fmt.Fprintf(out, "load %v; %d lines, %d bytes, %d tokens per round; %d rounds in %v\n",
		loadTime.Round(time.Millisecond), len(lines), bytes, tokens/rounds, rounds, elapsed.Round(time.Millisecond))
	fmt.Fprintf(out, "encode: %.0f tokens/s, %.2f MB/s\n", float64(tokens)/sec, float64(bytes*rounds)/sec/1e6)
}
