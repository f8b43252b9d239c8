package theme

import (
	"fmt"
	"image/color"
	"os"

	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"
)

// Palette is the handful of colours the console uses. A nil colour means the terminal's own.
type Palette struct {
	Name    string
	Text    color.Color // body text
	Muted   color.Color // labels, stale data, help
	Accent  color.Color // the active tab, titles, the selected row
	Good    color.Color // connected, healthy, in balance
	Warn    color.Color // leaks, over retention, a sweep that is late
	Bad     color.Color // disconnected, wrong types, mismatches
	Spark   color.Color // sparklines and bars
	Banner  color.Color // the background of the disconnected banner
	Select  color.Color // the background of the selected row
	Write   color.Color // the WRITES ON badge's background
	Reading color.Color // the READ-ONLY badge's background
}

// Dark is for dark terminal backgrounds (the default).
var Dark = Palette{
	Name: "dark", Text: lipgloss.Color("#d0d0d0"), Muted: lipgloss.Color("#808080"),
	Accent: lipgloss.Color("#5fafff"), Good: lipgloss.Color("#5fd75f"), Warn: lipgloss.Color("#ffaf00"),
	Bad: lipgloss.Color("#ff5f5f"), Spark: lipgloss.Color("#87afd7"), Banner: lipgloss.Color("#870000"),
	Select: lipgloss.Color("#303a4a"), Write: lipgloss.Color("#af5f00"), Reading: lipgloss.Color("#005f87"),
}

// Light is for light terminal backgrounds.
var Light = Palette{
	Name: "light", Text: lipgloss.Color("#303030"), Muted: lipgloss.Color("#767676"),
	Accent: lipgloss.Color("#005faf"), Good: lipgloss.Color("#008700"), Warn: lipgloss.Color("#af5f00"),
	Bad: lipgloss.Color("#d70000"), Spark: lipgloss.Color("#005f87"), Banner: lipgloss.Color("#ffd7d7"),
	Select: lipgloss.Color("#dadada"), Write: lipgloss.Color("#ffd787"), Reading: lipgloss.Color("#afd7ff"),
}

// None has no colour at all: emphasis is bold, faint and reverse video only. NO_COLOR selects it.
var None = Palette{Name: "none"}

// Styles is every style the console draws with. tui/ uses these and builds none of its own.
type Styles struct {
	Palette Palette

	Text, Muted, Title, Good, Warn, Bad, Spark lipgloss.Style
	Header, Demo, WritesOn, ReadOnly           lipgloss.Style
	Tab, ActiveTab                             lipgloss.Style
	TableHead, Selected                        lipgloss.Style
	Panel, PanelTitle                          lipgloss.Style
	Banner, Stale, Overlay                     lipgloss.Style
	Help                                       help.Styles
}

// Names lists the themes --theme accepts.
var Names = []string{"dark", "light", "none"}

// Pick returns the palette named name; NO_COLOR set in the environment (to anything) means None
// whatever the name, as no-color.org asks.
func Pick(name string) (Palette, error) {
	if os.Getenv("NO_COLOR") != "" {
		return None, nil
	}
	switch name {
	case "", "dark":
		return Dark, nil
	case "light":
		return Light, nil
	case "none":
		return None, nil
	}
	return Palette{}, fmt.Errorf("unknown theme %q (want dark, light or none)", name)
}

// New builds the styles of palette p.
func New(p Palette) Styles {
	fg := func(c color.Color) lipgloss.Style {
		s := lipgloss.NewStyle()
		if c != nil {
			s = s.Foreground(c)
		}
		return s
	}
	bg := func(s lipgloss.Style, c color.Color) lipgloss.Style {
		if c != nil {
			return s.Background(c)
		}
		return s.Reverse(true)
	}
	s := Styles{Palette: p}
	s.Text = fg(p.Text)
	s.Muted = fg(p.Muted).Faint(p.Muted == nil)
	s.Title = fg(p.Accent).Bold(true)
	s.Good = fg(p.Good)
	s.Warn = fg(p.Warn).Bold(p.Warn == nil)
	s.Bad = fg(p.Bad).Bold(true)
	s.Spark = fg(p.Spark)
	s.Header = fg(p.Text).Bold(true)
	s.Demo = bg(fg(p.Text).Bold(true), p.Reading).Padding(0, 1)
	s.WritesOn = bg(fg(p.Text).Bold(true), p.Write).Padding(0, 1)
	s.ReadOnly = bg(fg(p.Text).Bold(true), p.Reading).Padding(0, 1)
	s.Tab = fg(p.Muted).Padding(0, 1)
	s.ActiveTab = fg(p.Accent).Bold(true).Underline(true).Padding(0, 1)
	s.TableHead = fg(p.Muted).Bold(true)
	s.Selected = bg(fg(p.Text).Bold(true), p.Select)
	s.Panel = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1)
	if p.Muted != nil {
		s.Panel = s.Panel.BorderForeground(p.Muted)
	}
	s.PanelTitle = fg(p.Accent).Bold(true)
	s.Banner = bg(fg(p.Text).Bold(true), p.Banner)
	s.Stale = fg(p.Muted).Faint(true)
	s.Overlay = lipgloss.NewStyle().Border(lipgloss.DoubleBorder()).Padding(0, 1)
	if p.Accent != nil {
		s.Overlay = s.Overlay.BorderForeground(p.Accent)
	}
	s.Help = help.Styles{
		ShortKey: fg(p.Accent), ShortDesc: fg(p.Muted), ShortSeparator: fg(p.Muted),
		Ellipsis: fg(p.Muted), FullKey: fg(p.Accent), FullDesc: fg(p.Text), FullSeparator: fg(p.Muted),
	}
	return s
}
