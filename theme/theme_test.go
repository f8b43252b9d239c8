package theme

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestPickRespectsNoColor(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	for name, want := range map[string]string{"": "dark", "dark": "dark", "light": "light", "none": "none"} {
		p, err := Pick(name)
		if err != nil || p.Name != want {
			t.Errorf("Pick(%q) = %q, %v; want %q", name, p.Name, err, want)
		}
	}
	if _, err := Pick("solarized"); err == nil || !strings.Contains(err.Error(), "dark, light or none") {
		t.Errorf("an unknown theme: %v", err)
	}
	t.Setenv("NO_COLOR", "1")
	if p, _ := Pick("dark"); p.Name != "none" {
		t.Errorf("with NO_COLOR set, Pick(dark) = %q, want none", p.Name)
	}
}

// sgr matches a Select Graphic Rendition sequence.
var sgr = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// colours reports whether s sets a foreground or background colour.
func colours(s string) bool {
	for _, m := range sgr.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			n, _ := strconv.Atoi(p)
			if (n >= 30 && n <= 49) || (n >= 90 && n <= 107) {
				return true
			}
		}
	}
	return false
}

// TestNoneHasNoColour renders every style of the none palette: emphasis only, never a colour.
func TestNoneHasNoColour(t *testing.T) {
	s := New(None)
	for i, st := range []string{
		s.Text.Render("x"), s.Muted.Render("x"), s.Title.Render("x"), s.Warn.Render("x"), s.Bad.Render("x"),
		s.Banner.Render("x"), s.Selected.Render("x"), s.WritesOn.Render("x"), s.Panel.Render("x"),
	} {
		if colours(st) {
			t.Fatalf("style %d of the none palette drew a colour: %q", i, st)
		}
	}
	if d := New(Dark); !colours(d.Bad.Render("x")) {
		t.Fatalf("the dark palette drew no colour: %q", d.Bad.Render("x"))
	}
}
