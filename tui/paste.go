package tui

import (
	"fmt"
	"strings"
	"unicode"
)

// A long paste is folded in the input into one line, a chip that gives its
// size ("[paste 1 · 700 lines · ~10.9k tokens]"), so the message around it
// stays readable and its size is known before it is sent. The chip's text
// is sent whole; the fold key unfolds every chip into its text, and folds
// it back while the text is unchanged.

const (
	foldLines = 10   // a paste of more lines than this is folded
	foldRunes = 2000 // and one of more characters
)

// pastes holds the text of the chips in the input: a chip stands for its
// text wherever it appears (the messages sent before, recalled with ↑).
type pastes struct {
	n     int
	texts map[string]string // chip → text
	order []string          // chips, oldest first
}

// fold returns the chip for a paste long enough to fold; ok is false for
// one that goes into the input as it is.
func (p *pastes) fold(text string) (chip string, ok bool) {
	text = inputForm(text)
	if strings.Count(strings.TrimSuffix(text, "\n"), "\n")+1 <= foldLines && len([]rune(text)) <= foldRunes {
		return "", false
	}
	if p.texts == nil {
		p.texts = map[string]string{}
	}
	p.n++
	chip = fmt.Sprintf("[paste %d · %s]", p.n, sizeText(text))
	p.texts[chip] = text
	p.order = append(p.order, chip)
	return chip, true
}

// expand returns v with every chip replaced by its text.
func (p *pastes) expand(v string) string {
	if len(p.texts) == 0 || !strings.Contains(v, "[paste ") {
		return v
	}
	for _, chip := range p.order {
		v = strings.ReplaceAll(v, chip, p.texts[chip])
	}
	return v
}

// refold returns v with the text of each paste that is still whole in it
// replaced by its chip.
func (p *pastes) refold(v string) string {
	for _, chip := range p.order {
		if t := p.texts[chip]; strings.Contains(v, t) {
			v = strings.Replace(v, t, chip, 1)
		}
	}
	return v
}

// hasChip reports whether v holds a chip.
func (p *pastes) hasChip(v string) bool {
	for _, chip := range p.order {
		if strings.Contains(v, chip) {
			return true
		}
	}
	return false
}

// inputForm is text as the input holds it: line ends as \n, a tab as four
// spaces, no other control characters (the textarea's own rules), so a
// chip unfolded is exactly the text a paste would have put there.
func inputForm(s string) string {
	s = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\t", "    ").Replace(s)
	return strings.Map(func(r rune) rune {
		if r == unicode.ReplacementChar || r != '\n' && unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}

// sizeText is the size of a text as a chip and the input's rule show it:
// "700 lines · ~10.9k tokens".
func sizeText(s string) string {
	lines := strings.Count(strings.TrimSuffix(s, "\n"), "\n") + 1
	t := estimateTokens(s)
	tokens := fmt.Sprintf("~%d tokens", t)
	switch {
	case t >= 100_000:
		tokens = fmt.Sprintf("~%.0fk tokens", float64(t)/1000)
	case t >= 1000:
		tokens = fmt.Sprintf("~%.1fk tokens", float64(t)/1000)
	}
	return plural(lines, "line") + " · " + tokens
}

// estimateTokens guesses how many tokens s is without the tokenizer, cheap
// enough for every key: about four characters a token in alphabetic
// scripts, one a character from the CJK blocks on.
func estimateTokens(s string) int {
	narrow, wide := 0, 0
	for _, r := range s {
		if r >= 0x2E80 {
			wide++
		} else {
			narrow++
		}
	}
	return (narrow+3)/4 + wide
}
