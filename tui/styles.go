package tui

import (
	"image/color"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textarea"
	"charm.land/lipgloss/v2"
)

// Styles holds every style the interface draws with, so a theme change
// is one value swap and no component carries its own colours.
type Styles struct {
	Dark    bool
	NoColor bool

	// Header and bars.
	Header      lipgloss.Style
	Brand       lipgloss.Style
	HeaderName  lipgloss.Style
	HeaderDim   lipgloss.Style
	StatusBar   lipgloss.Style
	StatusKey   lipgloss.Style
	StatusValue lipgloss.Style
	StatusLive  lipgloss.Style
	StatusIdle  lipgloss.Style
	StatusWarn  lipgloss.Style
	StatusSep   lipgloss.Style

	// Conversation.
	UserLabel    lipgloss.Style
	ModelLabel   lipgloss.Style
	UserText     lipgloss.Style
	Chip         lipgloss.Style // an attachment: a queued file, a sent one
	Footer       lipgloss.Style
	Cancelled    lipgloss.Style
	Thinking     lipgloss.Style
	ThinkingFold lipgloss.Style
	Draft        lipgloss.Style
	Welcome      lipgloss.Style
	WelcomeKey   lipgloss.Style
	ScrollHint   lipgloss.Style
	WindowRule   lipgloss.Style // "the model no longer sees above this line"
	Cursor       lipgloss.Style
	Version      lipgloss.Style // "‹ 2/3 ›" after a message with versions
	CodeLabel    lipgloss.Style // "code 2 · go · /copy code 2" above a block
	FindMatch    lipgloss.Style // a search match
	FindCurrent  lipgloss.Style // the match the search is on
	ToolLabel    lipgloss.Style // a tool call card's "⚙ server.tool"
	ToolWait     lipgloss.Style // a call waiting for the person, or running
	ToolOutput   lipgloss.Style // a call's result
	ToolFailed   lipgloss.Style // a call refused or failed

	// Panels.
	PanelBorder   lipgloss.Style
	PanelFocused  lipgloss.Style // the border of the panel that has the keys
	PanelTitle    lipgloss.Style
	Label         lipgloss.Style
	Value         lipgloss.Style
	Dim           lipgloss.Style
	BarFull       lipgloss.Style
	BarEmpty      lipgloss.Style
	BarWarn       lipgloss.Style
	Spark         lipgloss.Style
	Selected      lipgloss.Style
	Incompatible  lipgloss.Style
	ConfirmPrompt lipgloss.Style

	// Toasts.
	ToastInfo  lipgloss.Style
	ToastError lipgloss.Style

	// Input, completion and palette.
	InputRule      lipgloss.Style
	Prompt         lipgloss.Style
	CompletionItem lipgloss.Style
	CompletionSel  lipgloss.Style
	CompletionDesc lipgloss.Style
	PaletteBox     lipgloss.Style
	PaletteTitle   lipgloss.Style

	Help     help.Styles
	Textarea textarea.Styles
}

// newStyles builds the styles for a background (dark or light). With
// noColor every distinction that colour would carry is made with an
// attribute instead (bold, underline, reverse), so NO_COLOR users lose
// nothing but the colour.
func newStyles(dark, noColor bool) *Styles {
	ld := lipgloss.LightDark(dark)
	c := func(light, darkHex string) color.Color {
		return ld(lipgloss.Color(light), lipgloss.Color(darkHex))
	}
	var (
		accent  = c("#5A3FC0", "#A48BFF")
		accent2 = c("#1F7A5A", "#6BD6A8")
		text    = c("#1E1E1E", "#E4E4E4")
		dim     = c("#6E6E6E", "#8A8A8A")
		faint   = c("#B0B0B0", "#4A4A4A")
		barBG   = c("#ECE9F7", "#24213A")
		warn    = c("#B35C00", "#FFB454")
		bad     = c("#B3261E", "#FF6E6E")
		draftBG = c("#D8F5E6", "#16402F")
		draftFG = c("#0B5134", "#9CF2C8")
		selBG   = c("#DCD6F7", "#3B3466")
	)
	s := &Styles{Dark: dark, NoColor: noColor}
	n := lipgloss.NewStyle

	s.Header = n().Background(barBG).Foreground(text)
	s.Brand = n().Background(barBG).Foreground(accent).Bold(true)
	s.HeaderName = n().Background(barBG).Foreground(text).Bold(true)
	s.HeaderDim = n().Background(barBG).Foreground(dim)
	s.StatusBar = n().Background(barBG).Foreground(text)
	s.StatusKey = n().Background(barBG).Foreground(dim)
	s.StatusValue = n().Background(barBG).Foreground(text)
	s.StatusLive = n().Background(barBG).Foreground(accent2).Bold(true)
	s.StatusIdle = n().Background(barBG).Foreground(dim)
	s.StatusWarn = n().Background(barBG).Foreground(warn).Bold(true)
	s.StatusSep = n().Background(barBG).Foreground(faint)

	s.UserLabel = n().Foreground(accent2).Bold(true)
	s.ModelLabel = n().Foreground(accent).Bold(true)
	s.UserText = n().Foreground(text)
	s.Chip = n().Foreground(accent2)
	s.Footer = n().Foreground(dim)
	s.Cancelled = n().Foreground(warn)
	s.Thinking = n().Foreground(dim).Italic(true)
	s.ThinkingFold = n().Foreground(dim)
	s.Draft = n().Background(draftBG).Foreground(draftFG)
	s.Welcome = n().Foreground(dim)
	s.WelcomeKey = n().Foreground(accent).Bold(true)
	s.ScrollHint = n().Foreground(accent).Reverse(true)
	s.WindowRule = n().Foreground(dim)
	s.Cursor = n().Foreground(accent)
	s.Version = n().Foreground(accent)
	s.CodeLabel = n().Foreground(dim).Italic(true)
	s.FindMatch = n().Background(c("#FFE8A3", "#5C4A00")).Foreground(text)
	s.FindCurrent = n().Background(warn).Foreground(c("#FFFFFF", "#1E1E1E")).Bold(true)
	s.ToolLabel = n().Foreground(accent2).Bold(true)
	s.ToolWait = n().Foreground(warn)
	s.ToolOutput = n().Foreground(text)
	s.ToolFailed = n().Foreground(bad)

	s.PanelBorder = n().Border(lipgloss.RoundedBorder()).BorderForeground(faint).Padding(0, 1)
	s.PanelFocused = n().Border(lipgloss.ThickBorder()).BorderForeground(accent).Padding(0, 1)
	s.PanelTitle = n().Foreground(accent).Bold(true)
	s.Label = n().Foreground(dim)
	s.Value = n().Foreground(text)
	s.Dim = n().Foreground(dim)
	s.BarFull = n().Foreground(accent2)
	s.BarEmpty = n().Foreground(faint)
	s.BarWarn = n().Foreground(warn)
	s.Spark = n().Foreground(accent)
	s.Selected = n().Background(selBG).Foreground(text).Bold(true)
	s.Incompatible = n().Foreground(bad)
	s.ConfirmPrompt = n().Foreground(bad).Bold(true)

	s.ToastInfo = n().Foreground(accent2)
	s.ToastError = n().Foreground(bad).Bold(true)

	s.InputRule = n().Foreground(faint)
	s.Prompt = n().Foreground(accent).Bold(true)
	s.CompletionItem = n().Foreground(text)
	s.CompletionSel = n().Background(selBG).Foreground(text).Bold(true)
	s.CompletionDesc = n().Foreground(dim)
	s.PaletteBox = n().Border(lipgloss.RoundedBorder()).BorderForeground(accent).Padding(0, 1)
	s.PaletteTitle = n().Foreground(accent).Bold(true)

	s.Help = help.DefaultStyles(dark)
	s.Textarea = textarea.DefaultStyles(dark)
	s.Textarea.Focused.CursorLine = n()
	s.Textarea.Focused.Prompt = s.Prompt
	s.Textarea.Blurred.Prompt = s.Dim
	s.Textarea.Focused.Placeholder = s.Dim
	s.Textarea.Blurred.Placeholder = s.Dim

	if noColor {
		s.applyNoColor()
	}
	return s
}

// applyNoColor replaces colour-carried meaning with attributes: the
// renderer drops colours under NO_COLOR, and a draft highlight or a
// selection must still be visible.
func (s *Styles) applyNoColor() {
	n := lipgloss.NewStyle
	s.Header = n()
	s.Brand = n().Bold(true)
	s.HeaderName = n().Bold(true)
	s.HeaderDim = n()
	s.StatusBar = n().Reverse(true)
	s.StatusKey = n().Reverse(true)
	s.StatusValue = n().Reverse(true)
	s.StatusLive = n().Reverse(true).Bold(true)
	s.StatusIdle = n().Reverse(true)
	s.StatusWarn = n().Reverse(true).Bold(true)
	s.StatusSep = n().Reverse(true)
	s.UserLabel = n().Bold(true)
	s.ModelLabel = n().Bold(true)
	s.UserText = n()
	s.Chip = n().Bold(true)
	s.Footer = n()
	s.Cancelled = n().Bold(true)
	s.Thinking = n().Italic(true)
	s.ThinkingFold = n()
	s.Draft = n().Reverse(true)
	s.Welcome = n()
	s.WelcomeKey = n().Bold(true)
	s.ScrollHint = n().Reverse(true)
	s.WindowRule = n()
	s.Cursor = n().Bold(true)
	s.Version = n()
	s.CodeLabel = n().Italic(true)
	s.FindMatch = n().Underline(true)
	s.FindCurrent = n().Reverse(true).Bold(true)
	s.ToolLabel = n().Bold(true)
	s.ToolWait = n()
	s.ToolOutput = n()
	s.ToolFailed = n().Bold(true)
	s.PanelBorder = n().Border(lipgloss.NormalBorder()).Padding(0, 1)
	s.PanelFocused = n().Border(lipgloss.ThickBorder()).Padding(0, 1)
	s.PanelTitle = n().Bold(true)
	s.Label = n()
	s.Value = n()
	s.Dim = n()
	s.BarFull = n()
	s.BarEmpty = n()
	s.BarWarn = n().Bold(true)
	s.Spark = n()
	s.Selected = n().Reverse(true)
	s.Incompatible = n().Bold(true)
	s.ConfirmPrompt = n().Bold(true)
	s.ToastInfo = n()
	s.ToastError = n().Bold(true)
	s.InputRule = n()
	s.Prompt = n().Bold(true)
	s.CompletionItem = n()
	s.CompletionSel = n().Reverse(true)
	s.CompletionDesc = n()
	s.PaletteBox = n().Border(lipgloss.NormalBorder()).Padding(0, 1)
	s.PaletteTitle = n().Bold(true)
	s.Help = help.Styles{}
	s.Textarea = textarea.DefaultStyles(s.Dark)
	for _, st := range []*textarea.StyleState{&s.Textarea.Focused, &s.Textarea.Blurred} {
		*st = textarea.StyleState{Prompt: n().Bold(true)}
	}
}
