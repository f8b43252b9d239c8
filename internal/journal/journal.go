package journal

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/hourglass-dev/hourglass/store/jobs"
)

// DefaultLimit is the most bytes the journal file holds: 256 MiB.
const DefaultLimit int64 = 256 << 20

// FileName is the journal's file name in the state directory.
const FileName = "journal.jsonl"

// ErrFull says a chunk's undo data would take the journal past its bound: the action stops
// before that chunk, and what it did so far can be undone.
var ErrFull = errors.New("the journal is full")

// ErrNothing says the journal holds no action on the target that has not been undone.
var ErrNothing = errors.New("no action to undo")

// DefaultPath is where the journal lives: $XDG_STATE_HOME/hourglass/journal.jsonl, else
// ~/.local/state/hourglass/journal.jsonl.
func DefaultPath() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "hourglass", FileName), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("journal: no state directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "hourglass", FileName), nil
}

// Action names one bulk action: where it was done and what.
type Action struct {
	ID      string    `json:"id"`
	Target  string    `json:"target"` // the Redis it was done on, as the command names it
	Queue   string    `json:"queue"`  // the queue, as the console names it
	Section string    `json:"section"`
	Action  string    `json:"action"`
	At      time.Time `json:"at"`
	Planned int64     `json:"planned"`
	// Result is what the action did, from its end record; nil when it has none (the process
	// ended while it ran). Last fills it in; it is not written with the action.
	Result *jobs.BulkResult `json:"-"`
	// Resumed counts the undo records an undo stopped part way (ctrl+c, a crash) put back
	// already: Last leaves them out, so the next undo goes on from there. Not written with the
	// action.
	Resumed int64 `json:"-"`
}

// line is one line of the file: Type "begin" (Action), "chunk" (Tasks), "end" (Result),
// "undoing" (N: the undo records put back so far, the last recorded first) or "undone" (At).
type line struct {
	Type   string           `json:"t"`
	ID     string           `json:"id"`
	Action *Action          `json:"action,omitempty"`
	Tasks  []task           `json:"tasks,omitempty"`
	Result *jobs.BulkResult `json:"result,omitempty"`
	At     *time.Time       `json:"at,omitempty"`
	N      int64            `json:"n,omitempty"`
}

// task is a jobs.UndoTask with its bytes kept exact (base64 in JSON).
type task struct {
	Kind     string  `json:"k"`
	Key      []byte  `json:"key"`
	Member   []byte  `json:"m,omitempty"`
	Score    float64 `json:"s,omitempty"`
	NewScore float64 `json:"n,omitempty"`
	List     []byte  `json:"l,omitempty"`
	Pushed   []byte  `json:"p,omitempty"`
	Dump     []byte  `json:"d,omitempty"`
	ExpireAt int64   `json:"e,omitempty"`
	Hash     []byte  `json:"h,omitempty"`
	State    string  `json:"st,omitempty"`
	NewState string  `json:"ns,omitempty"`
	Keys     []task  `json:"ks,omitempty"`
}

func taskOf(u jobs.UndoTask) task {
	return task{Kind: u.Kind, Key: []byte(u.Key), Member: []byte(u.Member), Score: u.Score, NewScore: u.NewScore,
		List: []byte(u.List), Pushed: []byte(u.Pushed), Dump: []byte(u.Dump), ExpireAt: u.ExpireAt,
		Hash: []byte(u.Hash), State: u.State, NewState: u.NewState, Keys: mapTasks(u.Keys, taskOf)}
}

func mapTasks[A, B any](in []A, f func(A) B) []B {
	var out []B
	for _, x := range in {
		out = append(out, f(x))
	}
	return out
}

func (t task) undo() jobs.UndoTask {
	return jobs.UndoTask{Kind: t.Kind, Key: string(t.Key), Member: string(t.Member), Score: t.Score, NewScore: t.NewScore,
		List: string(t.List), Pushed: string(t.Pushed), Dump: string(t.Dump), ExpireAt: t.ExpireAt,
		Hash: string(t.Hash), State: t.State, NewState: t.NewState, Keys: mapTasks(t.Keys, task.undo)}
}

// Journal is the file at Path, bounded to Limit bytes. Its methods are safe for concurrent use
// within one process; two processes writing one journal may interleave whole lines, each line
// naming its action, so neither's record is lost.
type Journal struct {
	Path  string
	Limit int64
	mu    sync.Mutex
}

// Open is the journal at path (DefaultPath when ""), bounded to limit bytes (DefaultLimit when
// 0). Its directory is made (0700) when missing; the file is made by the first action.
func Open(path string, limit int64) (*Journal, error) {
	if path == "" {
		var err error
		if path, err = DefaultPath(); err != nil {
			return nil, err
		}
	}
	if limit <= 0 {
		limit = DefaultLimit
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return &Journal{Path: path, Limit: limit}, nil
}

// Entry is one action being recorded.
type Entry struct {
	j  *Journal
	id string
}

// Begin records the start of action a (its ID is set here) and returns the entry its chunks are
// recorded in. When the file holds half its bound or more, the oldest whole actions are dropped
// first until it holds less.
func (j *Journal) Begin(a Action) (*Entry, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.compact(); err != nil {
		return nil, err
	}
	a.ID = strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := j.append(line{Type: "begin", ID: a.ID, Action: &a}); err != nil {
		return nil, err
	}
	return &Entry{j: j, id: a.ID}, nil
}

// Record appends what undoes one chunk, fsynced, before the chunk runs. ErrFull: the file would
// pass its bound; nothing was written.
func (e *Entry) Record(tasks []jobs.UndoTask) error {
	l := line{Type: "chunk", ID: e.id, Tasks: make([]task, len(tasks))}
	for i, u := range tasks {
		l.Tasks[i] = taskOf(u)
	}
	e.j.mu.Lock()
	defer e.j.mu.Unlock()
	return e.j.append(l)
}

// End records what the action did.
func (e *Entry) End(res jobs.BulkResult) error {
	e.j.mu.Lock()
	defer e.j.mu.Unlock()
	return e.j.append(line{Type: "end", ID: e.id, Result: &res})
}

// append writes one line and fsyncs it, refusing (ErrFull) one that would pass the bound.
func (j *Journal) append(l line) error {
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	b = append(b, '\n')
	f, err := os.OpenFile(j.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if st.Size() > 0 { // a line cut short by a crash is ended, so this one stands on its own
		last := make([]byte, 1)
		if r, err := os.Open(j.Path); err == nil {
			_, _ = r.ReadAt(last, st.Size()-1)
			r.Close()
		}
		if last[0] != '\n' {
			b = append([]byte{'\n'}, b...)
		}
	}
	if st.Size()+int64(len(b)) > j.Limit {
		return fmt.Errorf("journal: %s: %w (%d bytes, bound %d)", j.Path, ErrFull, st.Size(), j.Limit)
	}
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

// Last is the newest action on target not undone yet, with its chunks' undo data in the order
// they were recorded: once the newest is undone, the one before it, and so on back, as an
// editor's undo goes. ErrNothing when there is none. The file is read twice (the action, then
// its chunks) so only that action's data is held.
func (j *Journal) Last(target string) (Action, []jobs.UndoTask, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var begun []Action
	undone := map[string]bool{}
	err := j.each(func(l line, _ []byte) {
		switch {
		case l.Type == "begin" && l.Action != nil && l.Action.Target == target:
			begun = append(begun, *l.Action)
		case l.Type == "undone":
			undone[l.ID] = true
		}
	})
	if err != nil {
		return Action{}, nil, err
	}
	var last Action
	for i := len(begun) - 1; i >= 0 && last.ID == ""; i-- {
		if !undone[begun[i].ID] {
			last = begun[i]
		}
	}
	if last.ID == "" {
		return Action{}, nil, fmt.Errorf("journal: %s: %w on %s", j.Path, ErrNothing, target)
	}
	var tasks []jobs.UndoTask
	err = j.each(func(l line, _ []byte) {
		switch {
		case l.Type == "chunk" && l.ID == last.ID:
			for _, t := range l.Tasks {
				tasks = append(tasks, t.undo())
			}
		case l.Type == "end" && l.ID == last.ID:
			last.Result = l.Result
		case l.Type == "undoing" && l.ID == last.ID:
			last.Resumed = max(last.Resumed, l.N)
		}
	})
	if err != nil {
		return Action{}, nil, err
	}
	last.Resumed = min(last.Resumed, int64(len(tasks)))
	return last, tasks[:int64(len(tasks))-last.Resumed], nil
}

// UndoProgress records that an undo of the action id has put back its last n undo records. An undo
// goes from the last record back, so one stopped part way goes on from there. Putting a record back
// twice could undo a later record's work. (A job a later chunk's trim recorded would be put back
// where an earlier chunk's undo had already taken it from.)
func (j *Journal) UndoProgress(id string, n int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.append(line{Type: "undoing", ID: id, N: n})
}

// Undone records that the action id was undone, so Last no longer offers it.
func (j *Journal) Undone(id string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	now := time.Now()
	return j.append(line{Type: "undone", ID: id, At: &now})
}

// each reads every line of the file (none when it does not exist yet); a line cut short by a
// crash while it was written is skipped.
func (j *Journal) each(fn func(l line, raw []byte)) error {
	f, err := os.Open(j.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		raw, err := r.ReadBytes('\n')
		if len(raw) > 0 && raw[len(raw)-1] == '\n' {
			var l line
			if json.Unmarshal(raw, &l) == nil {
				fn(l, raw)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
	}
}

// compact drops the oldest whole actions while the file holds half its bound or more, by
// writing the rest to a new file renamed over it.
func (j *Journal) compact() error {
	st, err := os.Stat(j.Path)
	if errors.Is(err, os.ErrNotExist) || err == nil && st.Size() < j.Limit/2 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	sizes, order := map[string]int64{}, []string{}
	if err := j.each(func(l line, raw []byte) {
		if _, seen := sizes[l.ID]; !seen {
			order = append(order, l.ID)
		}
		sizes[l.ID] += int64(len(raw))
	}); err != nil {
		return err
	}
	keep, total := map[string]bool{}, int64(0)
	for i := len(order) - 1; i >= 0; i-- {
		if total+sizes[order[i]] >= j.Limit/2 {
			break
		}
		total += sizes[order[i]]
		keep[order[i]] = true
	}
	return j.rewrite(keep)
}

// rewrite keeps only the lines of the actions in keep.
func (j *Journal) rewrite(keep map[string]bool) error {
	tmp := j.Path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	w := bufio.NewWriter(f)
	err = j.each(func(l line, raw []byte) {
		if keep[l.ID] {
			_, _ = w.Write(raw)
		}
	})
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, j.Path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}
