package discover

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hourglass-dev/hourglass/internal/format"
)

// TOML renders the entry as one config.toml table, its keys in the order the config reference
// gives them. Every string is a TOML basic string: patterns hold only the characters discover
// lets into a literal, and names only letters, digits and underscores.
func (e *Entry) TOML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[[%s]]\n", e.Table)
	str := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s = %s\n", k, strconv.Quote(v))
		}
	}
	str("name", e.Name)
	str("layout", e.Layout)
	str("prefix", e.Prefix)
	str("key", e.Key)
	str("pattern", e.Pattern)
	str("kind", e.LimiterKind)
	str("hour_format", e.HourFormat)
	str("hour_retention", e.HourRetention)
	str("day_format", e.DayFormat)
	str("day_retention", e.DayRetention)
	str("timezone", e.Timezone)
	str("score_unit", e.ScoreUnit)
	str("window", e.Window)
	if e.Limit > 0 {
		fmt.Fprintf(&b, "limit = %d\n", e.Limit)
	}
	if e.InFlight != nil {
		fmt.Fprintf(&b, "inflight = %s\n", strconv.Quote(*e.InFlight))
	}
	if e.Processing != nil {
		fmt.Fprintf(&b, "processing = %s\n", strconv.Quote(*e.Processing))
	}
	if len(e.Exclude) > 0 {
		q := make([]string, len(e.Exclude))
		for i, x := range e.Exclude {
			q[i] = strconv.Quote(x)
		}
		fmt.Fprintf(&b, "exclude = [%s]\n", strings.Join(q, ", "))
	}
	return b.String()
}

// Doc is one discover run ready to print as config.toml: a whole file that works as --config as
// it is, or a section to put under an existing file.
type Doc struct {
	Target   string // what was swept, passwords hidden
	TakenAt  time.Time
	Elapsed  time.Duration
	KeysSeen int64
	Complete bool
	// Sampled says the sweep stopped on purpose at part of the keyspace (--sample, --for): the
	// header gives the coverage and each group its estimated keys and memory (Result's and each
	// Group's KeysEstimate and BytesEstimate).
	Sampled bool
	// Timezone is, under Merge, the top-level timezone of the file the section goes under, as
	// written: an entry whose windows show another zone keeps its own timezone line. A whole
	// file's top-level timezone is the zone most groups' windows show (see TopZone).
	Timezone string
	Redis    Connection // the [redis] table of a whole file
	// Merge names the file the section goes under, and Before is that file's text, printed
	// first, unchanged. With Merge set there is no [redis] table or timezone: the file has its
	// own, and its timezone is the one windows were read in.
	Merge  string
	Before string
	// Result is what the sweep found of the keys no entry claims.
	Result Result
	// Refused holds, by index in Result.Groups, why hourglass's config refuses a group's entry as
	// it stands (say, a counter whose hour and day keys fall in different cluster slots). Such an
	// entry is printed commented out, with the reason.
	Refused map[int]string

	top     string              // the zone entries are cut in unless they set their own
	topFits func(*zoneFit) bool // whether a group's windows fit top (nil: only by name)
}

// Connection is the [redis] table of a whole file: how to reach the Redis that was swept. It
// never holds a password.
type Connection struct {
	Addrs                       []string // as given, any URL's password removed
	Name, Username, PasswordEnv string
	TLSCA, TLSCert, TLSKey      string
	// The Sentinel keys, when the primary is found through Sentinels: the master name, the
	// Sentinels, and their own login.
	SentinelMaster                        string
	SentinelAddrs                         []string
	SentinelUsername, SentinelPasswordEnv string
	// Notes are comment lines above the table, such as that an address's password was left out.
	Notes []string
}

// Span is the lines (1-based, inclusive) of the rendered text one group's entry takes.
type Span struct{ Group, From, To int }

// writer builds the text and counts its lines.
type writer struct {
	b     strings.Builder
	lines int
}

// raw writes text that is already TOML (one or more lines, each ending in a newline).
func (w *writer) raw(text string) {
	w.b.WriteString(text)
	w.lines += strings.Count(text, "\n")
}

// comment writes line as one comment line, made safe to print: TOML comments allow no control
// characters, and no key name may break out of one onto a line of its own.
func (w *writer) comment(line string) {
	if line = Printable(line); line == "" {
		w.raw("#\n")
	} else {
		w.raw("# " + line + "\n")
	}
}

func (w *writer) blank() { w.raw("\n") }

// Render returns the config text and where each group's entry is in it.
func (d *Doc) Render() (string, []Span) {
	w := &writer{}
	d.topZone()
	if d.Merge != "" {
		w.raw(d.Before)
		if d.Before != "" && !strings.HasSuffix(d.Before, "\n") {
			w.raw("\n")
		}
		w.blank()
		w.comment(fmt.Sprintf("==== hourglass discover: the keys %s does not claim ====", d.Merge))
	} else {
		w.comment("hourglass discover: what the keys no entry claims look like, as config.toml entries.")
	}
	d.header(w)
	if d.Merge == "" {
		d.connection(w)
	}
	spans := d.groups(w)
	if d.Merge != "" {
		w.blank()
		w.comment("==== end of hourglass discover ====")
	}
	return w.b.String(), spans
}

// header says what was swept, how much was found, and that it is inference.
func (d *Doc) header(w *writer) {
	r := d.Result
	mem := ""
	if r.Bytes != nil {
		mem = " (~" + format.BytesIEC(*r.Bytes) + ")"
	}
	w.comment(fmt.Sprintf("target:   %s", d.Target))
	w.comment(fmt.Sprintf("swept:    %s (server time), in %s", d.TakenAt.Format("2006-01-02 15:04:05 MST"), d.Elapsed.Round(time.Millisecond)))
	w.comment(fmt.Sprintf("keys:     %s seen, %s claimed by no entry%s", format.Commas(d.KeysSeen), format.Commas(r.Keys), mem))
	if d.Sampled {
		d.sampleHeader(w)
	} else if !d.Complete {
		w.comment("INCOMPLETE: the sweep was stopped before it had seen every key; what follows is only what")
		w.comment("          it found so far. Run discover again to the end before relying on it.")
	}
	active, low, none := d.counts()
	w.comment(fmt.Sprintf("found:    %d groups: %d entries, %d commented out, %d with no entry", len(r.Groups), active, low, none))
	w.comment("")
	w.comment("Discovery is inference: each entry rests on the key names and on a few keys of each group")
	w.comment("read for their type, TTL and value; the evidence is above each entry. Check them against")
	w.comment("what you know of the programs that write these keys: rename entries, correct patterns,")
	w.comment("windows and retentions, and delete what you do not want watched. Low-confidence entries, and")
	w.comment("limiters whose limit the keys do not hold, are commented out: uncomment the ones that are")
	w.comment("right. `hourglass snapshot --config FILE` shows what each entry claims, and its unclaimed")
	w.comment("count what is still left. See docs/discover.md.")
}

// commented reports whether group i's entry is printed commented out: of low confidence, with
// a setting only guessed, or refused by the config as it stands.
func (d *Doc) commented(i int, g Group) bool {
	return g.Entry != nil && (g.Confidence == Low || len(g.Entry.Guessed) > 0 || d.Refused[i] != "")
}

// counts are the groups printed as entries, commented out, and as notes only.
func (d *Doc) counts() (active, commented, none int) {
	for i, g := range d.Result.Groups {
		switch {
		case g.Entry == nil:
			none++
		case d.commented(i, g):
			commented++
		default:
			active++
		}
	}
	return active, commented, none
}

// connection writes the top-level timezone and the [redis] table.
func (d *Doc) connection(w *writer) {
	w.blank()
	zone, groups := d.TopZone()
	if groups > 0 {
		w.comment(fmt.Sprintf("The zone the windows of %d of the groups below are cut in, as their newest windows show", groups))
		w.comment("against the server's clock; an entry whose windows show another sets its own timezone.")
	} else {
		w.comment("No group's windows show the zone they are cut in (none has windows being written): UTC is")
		w.comment("assumed. Set the zone your writers format window names in.")
	}
	w.raw(fmt.Sprintf("timezone = %s\n", strconv.Quote(zone)))
	w.blank()
	c := d.Redis
	for _, n := range c.Notes {
		w.comment(n)
	}
	w.raw("[redis]\n")
	quoted := make([]string, len(c.Addrs))
	for i, a := range c.Addrs {
		quoted[i] = tomlString(a)
	}
	w.raw("addrs = [" + strings.Join(quoted, ", ") + "]\n")
	if c.SentinelMaster != "" {
		sentinels := make([]string, len(c.SentinelAddrs))
		for i, a := range c.SentinelAddrs {
			sentinels[i] = tomlString(a)
		}
		w.raw("sentinel_master = " + tomlString(c.SentinelMaster) + "\n")
		w.raw("sentinel_addrs = [" + strings.Join(sentinels, ", ") + "]\n")
	}
	for _, kv := range [][2]string{
		{"name", c.Name}, {"username", c.Username}, {"password_env", c.PasswordEnv},
		{"sentinel_username", c.SentinelUsername}, {"sentinel_password_env", c.SentinelPasswordEnv},
		{"tls_ca_file", c.TLSCA}, {"tls_cert_file", c.TLSCert}, {"tls_key_file", c.TLSKey},
	} {
		if kv[1] != "" {
			w.raw(kv[0] + " = " + tomlString(kv[1]) + "\n")
		}
	}
}

// groups writes the entries, then the commented-out ones, then the groups with no entry.
func (d *Doc) groups(w *writer) []Span {
	var spans []Span
	sections := []struct {
		title string
		pick  func(i int, g Group) bool
	}{
		{"entries", func(i int, g Group) bool { return g.Entry != nil && !d.commented(i, g) }},
		{"entries commented out: low confidence, a limit to set, or refused as they stand", func(i int, g Group) bool {
			return g.Entry != nil && d.commented(i, g)
		}},
		{"keys hourglass has no entry for (caches, records, and what the evidence does not tell)", func(_ int, g Group) bool { return g.Entry == nil }},
	}
	for _, s := range sections {
		first := true
		for i, g := range d.Result.Groups {
			if !s.pick(i, g) {
				continue
			}
			if first {
				w.blank()
				w.comment("---- " + s.title + " ----")
				first = false
			}
			w.blank()
			if sp, ok := d.group(w, i, g); ok {
				spans = append(spans, sp)
			}
		}
	}
	if len(d.Result.Groups) == 0 {
		w.blank()
		w.comment("No key is left unclaimed: there is nothing to add.")
	}
	return spans
}

// group writes one group: its evidence as comments, then its entry (commented out when its
// confidence is low, a setting is only guessed or the config refuses it), and reports where the
// entry is.
func (d *Doc) group(w *writer, i int, g Group) (Span, bool) {
	writeEvidence(w, g)
	if g.Entry == nil {
		return Span{}, false
	}
	text := d.entryOf(g).TOML()
	switch {
	case d.Refused[i] != "":
		w.comment("Commented out: hourglass refuses this entry as it stands (" + d.Refused[i] + ").")
		w.comment("Correct it, then remove the \"# \" of its lines.")
		text = commentOut(text)
	case g.Confidence == Low:
		w.comment("Commented out: the evidence is too thin to watch these keys as this; if it is right,")
		w.comment("remove the \"# \" of its lines.")
		text = commentOut(text)
	case len(g.Entry.Guessed) > 0:
		w.comment("Commented out: the keys do not hold its " + strings.Join(g.Entry.Guessed, " and ") + ", guessed below; set yours,")
		w.comment("then remove the \"# \" of its lines.")
		text = commentOut(text)
	}
	from := w.lines + 1
	w.raw(text)
	return Span{Group: i, From: from, To: w.lines}, true
}

// writeEvidence writes what a group is and what that rests on.
func writeEvidence(w *writer, g Group) {
	mem := "memory unknown"
	if g.Bytes != nil {
		mem = "~" + format.BytesIEC(*g.Bytes) + " estimated"
	}
	w.comment("pattern:    " + g.Pattern)
	w.comment(fmt.Sprintf("kind:       %s", g.Kind))
	if g.KeysEstimate != nil {
		w.comment("keys:       " + estimatedKeys(g))
		w.comment(fmt.Sprintf("            %s seen (%s; %d read)", format.Commas(g.Keys), mem, g.Sampled))
	} else {
		w.comment(fmt.Sprintf("keys:       %s (%s; %d read)", format.Commas(g.Keys), mem, g.Sampled))
	}
	for j, ex := range g.Examples {
		label := "examples:   "
		if j > 0 {
			label = "            "
		}
		w.comment(label + ex)
	}
	for j, ev := range g.Evidence {
		label := "evidence:   "
		if j > 0 {
			label = "            "
		}
		w.comment(label + ev)
	}
	w.comment(fmt.Sprintf("confidence: %s", g.Confidence))
}

// Avoiding returns r with each entry whose name is taken (or already given to an entry before
// it) renamed to the first free name_2, name_3, ...: entries added under a file must not repeat
// its names. r's own entries are left as they are.
func (r Result) Avoiding(taken map[string]bool) Result {
	used := make(map[string]bool, len(taken))
	for n := range taken {
		used[n] = true
	}
	out := r
	out.Groups = make([]Group, len(r.Groups))
	for i, g := range r.Groups {
		if g.Entry != nil {
			en := *g.Entry
			en.Name = unused(en.Name, used)
			g.Entry = &en
		}
		out.Groups[i] = g
	}
	return out
}

// unused returns name, or name with the first free suffix _2, _3, ..., and marks it used.
func unused(name string, used map[string]bool) string {
	n := name
	for i := 2; used[n]; i++ {
		n = fmt.Sprintf("%s_%d", name, i)
	}
	used[n] = true
	return n
}

// commentOut prefixes every line of text with "# ".
func commentOut(text string) string {
	lines := strings.SplitAfter(text, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString("# " + l)
		}
	}
	return b.String()
}

// tomlString quotes s as a TOML basic string, escaping what TOML requires.
func tomlString(s string) string {
	return `"` + format.EscapeFunc(strings.ToValidUTF8(s, "\uFFFD"), 0, tomlRune) + `"`
}

// tomlRune is tomlString's rule for one rune: a quote and a backslash escaped with a backslash,
// control characters as \uXXXX.
func tomlRune(r rune, _ string) (string, bool) {
	switch {
	case r == '"' || r == '\\':
		return `\` + string(r), true
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf("\\u%04X", r), true
	}
	return "", false
}

// Printable makes text safe in a comment and on a terminal: control and format characters
// (bidi overrides among them), line and paragraph separators and bytes that are not UTF-8 are
// written as \n, \xNN or \u{NNNN}. Everything else, backslashes included, is left as it is, so
// text already escaped reads the same.
func Printable(s string) string { return format.EscapeFunc(s, 0, printableRune) }

// printableRune is Printable's rule for one rune.
func printableRune(r rune, raw string) (string, bool) {
	switch {
	case r == utf8.RuneError && len(raw) == 1:
		return fmt.Sprintf("\\x%02x", raw[0]), true
	case r == '\n':
		return `\n`, true
	case r == '\t':
		return `\t`, true
	case r == '\r':
		return `\r`, true
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf("\\x%02x", r), true
	case unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp):
		return fmt.Sprintf("\\u{%x}", r), true
	}
	return "", false
}

// Loader loads a rendered config as hourglass would. On a refusal it returns the line the refusal
// names (0 when it names none), the reason, and the error.
type Loader func(text string) (line int, reason string, err error)

// RenderLoadable renders d and loads the text with load. An entry the loader refuses as it stands
// (say, a counter whose hour and day keys fall in different cluster slots) is commented out with
// the loader's reason and the text rendered again, so the text returned always loads with no
// edits.
func (d *Doc) RenderLoadable(load Loader) (string, error) {
	d.Refused = map[int]string{}
	for range len(d.Result.Groups) + 1 {
		text, spans := d.Render()
		line, reason, err := load(text)
		if err == nil {
			return text, nil
		}
		refused := -1
		for _, sp := range spans {
			if line >= sp.From && line <= sp.To {
				refused = sp.Group
			}
		}
		if refused < 0 || d.Refused[refused] != "" {
			return "", fmt.Errorf("the config rendered does not load: %w", err)
		}
		d.Refused[refused] = reason
	}
	return "", errors.New("the config rendered does not load")
}
