package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/internal/format"
	"github.com/hourglass-dev/hourglass/snapshot"
)

// lockListLevel is a lock pattern's held locks from the last sweep (those without a TTL first);
// enter reads one.
type lockListLevel struct {
	snapLevel[snapshot.Lock, snapshot.LockHolder]
}

func newLockListLevel(c *console, d *drill, name string) *lockListLevel {
	l := &lockListLevel{snapLevel[snapshot.Lock, snapshot.LockHolder]{c: c, d: d, name: name,
		rows: list[snapshot.LockHolder]{id: func(h snapshot.LockHolder) string { return h.Raw }},
		find: func(s *snapshot.Snapshot, name string) *snapshot.Lock {
			return named(s.Locks, name, func(l snapshot.Lock) string { return l.Name })
		},
		keep: func(k *snapshot.Lock, filter string) []snapshot.LockHolder {
			return kept(k.Examples, func(ex snapshot.LockHolder) bool { return matches(filter, ex.Key, ex.Token) })
		},
	}}
	l.sync()
	return l
}

func (l *lockListLevel) bindings() []binding {
	return append(moveBindings(l.c.keys, &l.rows, nil), binding{Binding: withHelp(l.c.keys.Enter, "read lock"), short: true, do: func() tea.Cmd {
		if ex, ok := l.rows.selected(); ok {
			return l.d.push(newLockLevel(l.c, l.name, ex))
		}
		return nil
	}})
}

func (l *lockListLevel) render(w, h int) string {
	st := l.c.styles
	k, held := l.entry, l.rows.rows
	if k == nil {
		return st.Muted.Render("the last sweep has no lock pattern " + l.name)
	}
	head := fmt.Sprintf("%s  %s held, %s without a TTL", st.Title.Render(k.Name), format.Commas(k.Held), format.Commas(k.NoTTL))
	lines := []string{fit(head, w)}
	if int64(len(k.Examples)) < k.Held {
		lines = append(lines, st.Muted.Render(fit(fmt.Sprintf("%d of them listed, those without a TTL first", len(k.Examples)), w)))
	}
	t := &table{styles: l.c, cols: []column{
		{title: "KEY", flex: true}, {title: "TTL", right: true}, {title: "HELD FOR", right: true}, {title: "HOLDER", flex: true, optional: true},
	}}
	t.selected = l.rows.sel
	for _, ex := range held {
		ttl := format.Millis(ex.TTLMS)
		if ex.TTLMS == -1 {
			ttl = st.Bad.Render("none")
		}
		t.rows = append(t.rows, []string{ex.Key, ttl, heldText(ex.AgeMS), ex.Token})
	}
	if len(held) == 0 {
		return strings.Join(append(lines, st.Muted.Render("no held lock in the last sweep")), "\n")
	}
	tl := t.render(w)
	from, to := l.rows.window(max(h-len(lines)-2, 1))
	lines = append(append(lines, ""), tl[0])
	lines = append(lines, tl[1+from:1+to]...)
	return strings.Join(lines, "\n")
}

// heldText is how long a lock has been held, or why that is not known.
func heldText(ms int64) string {
	if ms < 0 {
		return "unknown"
	}
	return format.Millis(ms)
}

// lockLevel is one lock read now: its holder, PTTL and how long it has been held; u releases it
// when its TTL is gone.
type lockLevel struct {
	oneKey[snapshot.LockDetail]
	lock string
	ex   snapshot.LockHolder
}

func newLockLevel(c *console, lock string, ex snapshot.LockHolder) *lockLevel {
	one := oneKey[snapshot.LockDetail]{c: c, name: ex.Key,
		read: func(ctx context.Context, in Inspector) (snapshot.LockDetail, error) {
			return in.LockHolder(ctx, lock, ex.Raw)
		},
		command: func(d *snapshot.LockDetail) string { return d.Command }}
	return &lockLevel{oneKey: one, lock: lock, ex: ex}
}

// bindings: u is in the help only while the lock on screen has no TTL, the one case it acts on.
func (l *lockLevel) bindings() []binding {
	noTTL := l.d != nil && !l.d.Gone && l.d.PTTLMS == -1
	return []binding{
		{Binding: l.c.keys.Copy, short: true, hidden: l.d != nil && l.d.Gone, do: func() tea.Cmd {
			if l.d != nil && l.d.Gone {
				return nil // no key to read: the command is not shown
			}
			return l.toggleCommand()
		}},
		{Binding: l.c.keys.Unlock, short: true, do: l.release, write: l.c.opt.KeyActions == nil, hidden: !noTTL},
	}
}

// release asks to delete the lock, when it has no TTL.
func (l *lockLevel) release() tea.Cmd {
	d := l.d
	if d == nil {
		l.c.flash("the lock has not been read yet")
		return nil
	}
	if d.Gone || d.PTTLMS != -1 {
		l.c.flash("u releases only a lock whose TTL is gone; this one expires by itself")
		return nil
	}
	lock, k, holder := l.lock, d.Key, d.Holder
	return l.c.ask("Release a lock without a TTL", []string{
		"Delete " + format.Escape(d.Key),
		"held by " + truncate(format.Escape(d.Holder), 200) + ", with no TTL: nobody releases it by waiting.",
		"It is deleted only if that holder still holds it and it still has no TTL.",
	}, l, func(ctx context.Context, a KeyActions) (string, error) { return a.ReleaseLock(ctx, lock, k, holder) })
}

func (l *lockLevel) render(w, h int) string {
	st := l.c.styles
	lines := []string{st.Title.Render(l.lock) + "  " + l.ex.Key}
	if s := l.status(l.c); s != "" {
		lines = append(lines, s)
	}
	if l.c.opt.Inspector == nil {
		return strings.Join(append(lines, st.Muted.Render(noInspector)), "\n")
	}
	d := l.d
	if d == nil {
		return strings.Join(lines, "\n")
	}
	if d.Gone {
		lines = append(lines, "", "released or expired since the sweep: nobody holds it now")
		return strings.Join(lines, "\n")
	}
	ttl := format.Millis(d.PTTLMS)
	if d.PTTLMS == -1 {
		ttl = st.Bad.Render("none: held until someone deletes it")
	}
	lines = append(lines, "", field("holder", truncate(format.Escape(d.Holder), max(w-24, 8))), field("PTTL", ttl), field("held for", heldText(d.HeldMS)))
	if d.HeldMS < 0 {
		lines = append(lines, st.Muted.Render(fit("the holder's value does not say when it was taken", w)))
	}
	if l.showCmd {
		lines = append(append(lines, ""), wrapPlain(d.Command, w)...)
	}
	return strings.Join(lines, "\n")
}
