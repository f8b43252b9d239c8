package console

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/hourglass-dev/hourglass/internal/config"
	"github.com/hourglass-dev/hourglass/internal/discover"
	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/internal/infer"
	"github.com/hourglass-dev/hourglass/internal/watch"
	"github.com/hourglass-dev/hourglass/tui"
)

// session is the console's tui.Session: the Unclaimed view's groups added to the running
// watcher, and the proposal written to a file. Neither writes to Redis, so a read-only console
// has one too.
type session struct {
	w       *watch.Watcher
	cluster bool   // the target is a Redis Cluster: entries must keep their windows in one slot
	label   string // the target, for the proposal's header
	// inferred, with no config file, holds the entries adopted from the keys and those added
	// here; conn is then the [redis] table the file written begins with.
	inferred *infer.Adopter
	conn     discover.Connection

	mu    sync.Mutex
	cfg   *config.Config   // the config in use with the entries added so far
	added []discover.Entry // the entries added, in order
}

func newSession(w *watch.Watcher, cfg *config.Config, cluster bool, label string) *session {
	return &session{w: w, cfg: cfg, cluster: cluster, label: label}
}

// inferring makes s the session of a console with no config file: entries are added to the
// adopter's, and the file written is a whole config of them, beginning with conn.
func (s *session) inferring(a *infer.Adopter, conn discover.Connection) *session {
	s.inferred, s.conn = a, conn
	return s
}

// config is the config in use: the one the console began with, and the entries added to the
// session or, with no config file, inferred from the keys since.
func (s *session) config() *config.Config {
	if s.inferred != nil {
		return s.inferred.Config()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// Claim parses entry's TOML as the config in use would read it (its time zone, its names taken)
// and hands the new families and structures to the watcher, which counts their keys from the
// next sweep. Nothing is added when the config or the watcher refuses it.
func (s *session) Claim(ctx context.Context, entry discover.Entry) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var add *config.Entries
	var err error
	if s.inferred != nil {
		add, err = s.inferred.Add(entry)
	} else {
		add, err = s.parse(s.cfg, entry)
	}
	if err != nil {
		return "", err
	}
	if err := s.w.Claim(add.Counters, add.Structures); err != nil {
		return "", err
	}
	s.cfg = s.cfg.WithEntries(add)
	s.added = append(s.added, entry)
	return fmt.Sprintf("added [[%s]] %s to this session: counted from the next sweep (no file changed)", entry.Table, entry.Name), nil
}

// parse reads entry as an addition to cfg.
func (s *session) parse(cfg *config.Config, entry discover.Entry) (*config.Entries, error) {
	add, err := cfg.ParseEntries("entry", []byte(entry.TOML()))
	if err != nil {
		return nil, err
	}
	if s.cluster {
		if err := add.CheckCluster(); err != nil {
			return nil, err
		}
	}
	return add, nil
}

// WriteProposal writes to a new file at path what `hourglass discover --merge` prints for the
// config in use. That is its text, the entries added in this session, then an entry for each of p's
// groups that has one, checked to load. It refuses a path that exists: the config is never
// rewritten in place.
func (s *session) WriteProposal(ctx context.Context, path string, p tui.Proposal) (string, error) {
	if strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[2:])
		}
	}
	s.mu.Lock()
	doc, err := s.inferredDoc(p), error(nil)
	if s.inferred == nil {
		doc, err = s.doc(p)
	}
	s.mu.Unlock()
	if err != nil {
		return "", err
	}
	text, err := doc.RenderLoadable(config.Loads("proposal", s.cluster))
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("%s exists, and hourglass never overwrites a file: name another", path)
	}
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	active, off := 0, 0
	for i, g := range doc.Result.Groups {
		switch {
		case g.Entry == nil:
		case g.Confidence == discover.Low || doc.Refused[i] != "":
			off++
		default:
			active++
		}
	}
	if s.inferred != nil {
		return fmt.Sprintf("wrote %s: %s in force (inferred from the keys or added here), %d commented out; "+
			"hourglass --config %s watches them", path, format.Count(active, "entry", "entries"), off, path), nil
	}
	return fmt.Sprintf("wrote %s: the config in use, %s added in this session, %d proposed, %d commented out",
		path, format.Count(len(s.added), "entry", "entries"), active, off), nil
}

// doc is the proposal of p's groups under the config in use and the entries added in this session.
// As discover --merge does, it leaves out the groups whose entries were added and renames a
// proposed entry whose name the config already gives.
func (s *session) doc(p tui.Proposal) (*discover.Doc, error) {
	before, merge := withAddrs(string(s.cfg.Builtin), s.cfg.Redis.Addrs), "the built-in default config"
	if s.cfg.Path != "" {
		data, err := os.ReadFile(s.cfg.Path)
		if err != nil {
			return nil, fmt.Errorf("reading the config in use: %w", err)
		}
		before, merge = string(data), s.cfg.Path
	}
	if len(s.added) > 0 {
		var b strings.Builder
		b.WriteString(strings.TrimRight(before, "\n") + "\n\n# ==== added in the console's session on " + discover.Printable(s.label) + " ====\n")
		for _, e := range s.added {
			b.WriteString("\n" + e.TOML())
		}
		before = b.String()
	}
	r := p.Result // less the groups whose entries were added: the config above claims them now
	r.Groups = nil
	for _, g := range p.Result.Groups {
		if g.Entry == nil || !s.isAdded(*g.Entry) {
			r.Groups = append(r.Groups, g)
			continue
		}
		r.Keys -= g.Keys
		if r.Bytes != nil && g.Bytes != nil {
			r.Bytes = new(*r.Bytes - *g.Bytes)
		}
	}
	return &discover.Doc{Target: s.label, TakenAt: p.TakenAt, Elapsed: p.Elapsed, KeysSeen: p.KeysSeen, Complete: p.Complete,
		Timezone: s.cfg.TimezoneName, Merge: merge, Before: before, Result: r.Avoiding(s.cfg.Names())}, nil
}

// inferredDoc is the whole config file of a console with no config. It holds the [redis] table and
// the entries in force (adopted from the keys or added in this session). Then come those only
// proposed for p's groups, the low-confidence ones commented out.
func (s *session) inferredDoc(p tui.Proposal) *discover.Doc {
	if s.inferred == nil {
		return nil
	}
	cfg := s.inferred.Config()
	r := p.Result.Avoiding(cfg.Names())
	adopted := s.inferred.Groups()
	r.Groups = append(adopted, r.Groups...)
	for _, g := range adopted {
		r.Keys += g.Keys
	}
	r.Bytes, r.KeysEstimate, r.BytesEstimate = nil, nil, nil // the adopted groups' share is not known
	r.BytesNote = "the memory of the keys the entries above claim is in the console's views"
	return &discover.Doc{Target: s.label, TakenAt: p.TakenAt, Elapsed: p.Elapsed, KeysSeen: p.KeysSeen, Complete: p.Complete,
		Timezone: cfg.TimezoneName, Redis: s.conn, Result: r}
}

// withAddrs sets the built-in default's empty addrs to the addresses the console was given, so
// the file written reaches the Redis that was swept rather than the embedded one. An address that
// holds a password (a URL's user info) is not written: the line says so and stays empty.
func withAddrs(shipped string, addrs []string) string {
	if len(addrs) == 0 {
		return shipped
	}
	quoted := make([]string, len(addrs))
	for i, a := range addrs {
		if strings.Contains(a, "@") {
			return strings.Replace(shipped, "\naddrs = []\n", "\n# the console's address holds a password: set addrs here\naddrs = []\n", 1)
		}
		quoted[i] = strconv.Quote(a)
	}
	return strings.Replace(shipped, "\naddrs = []\n", "\naddrs = ["+strings.Join(quoted, ", ")+"]\n", 1)
}

// isAdded reports whether e was added in this session.
func (s *session) isAdded(e discover.Entry) bool {
	for _, a := range s.added {
		if a.Table == e.Table && a.Name == e.Name && a.Pattern == e.Pattern && a.Key == e.Key {
			return true
		}
	}
	return false
}
