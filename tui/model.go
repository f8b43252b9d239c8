package tui

import (
	"context"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/hourglass-dev/hourglass/snapshot"
	"github.com/hourglass-dev/hourglass/theme"
)

// viewNames are the tabs, in order; keys 1 to 7 pick them.
var viewNames = []string{"Overview", "Counters", "TTL health", "Queues", "Limiters", "Uniques", "Unclaimed"}

// console is what every view reads: the size, styles and keys, the options, and the data.
type console struct {
	width, height int
	styles        theme.Styles
	keys          KeyMap
	opt           Options
	now           func() time.Time

	status   snapshot.Status // from the last poll that succeeded
	polledAt time.Time       // when that was (server clock)
	stale    bool            // Redis is unreachable: the data is greyed, with its age

	// history keeps the last historyLen values of the queue and limiter numbers, one per new
	// snapshot, for their sparklines.
	history  map[string][]int64
	lastSnap time.Time

	// claims are the unclaimed groups added to the session (or being added, or refused), by
	// pattern.
	claims map[string]claim

	ctx   context.Context // ends the drill-down's reads
	flash func(string)    // says an outcome in the footer

	bulk *bulkRun // the bulk action under way (bulk.go), nil when none
	// searching is the last search to run a step (search.go): ctrl+c stops it while under way.
	searching *searchLevel
}

// snapshot is what the counter views show: the last complete sweep's Snapshot, or until the
// first completes, the sweep under way's, its figures estimates.
func (c *console) snapshot() *snapshot.Snapshot {
	if c.status.Snapshot != nil {
		return c.status.Snapshot
	}
	return c.status.Partial
}

// readAt is when s's figures were last read: its structures' live read, or its sweep.
func readAt(s *snapshot.Snapshot) time.Time {
	if s.StructuresAt.After(s.TakenAt) {
		return s.StructuresAt
	}
	return s.TakenAt
}

// historyLen is how many snapshots the sparklines of queues and limiters span.
const historyLen = 60

// record appends the new snapshot's queue and limiter numbers to the history.
func (c *console) record() {
	s := c.snapshot()
	if s == nil || readAt(s).Equal(c.lastSnap) {
		return
	}
	c.lastSnap = readAt(s)
	if c.history == nil {
		c.history = map[string][]int64{}
	}
	add := func(k string, v int64) {
		h := append(c.history[k], v)
		if len(h) > historyLen {
			h = h[len(h)-historyLen:]
		}
		c.history[k] = h
	}
	for _, q := range s.DelayQueues { // by key: a pattern's queues share a name
		add("dq.depth."+q.Key, q.Depth)
		if q.OldestDueAgeMS != nil {
			add("dq.lag."+q.Key, *q.OldestDueAgeMS)
		}
	}
	for _, q := range s.ListQueues {
		add("lq.length."+q.Key, q.Length)
	}
	seen := map[string]bool{}
	for _, l := range s.Limiters {
		if l.RejectedPerSec != nil {
			add("lim.rejected."+l.Name, int64(*l.RejectedPerSec+0.5))
		}
		for _, k := range l.Top {
			add(limHistory(l.Name, k.Raw), k.Count)
			seen[limHistory(l.Name, k.Raw)] = true
		}
	}
	for k := range c.history { // a key that left the top lists leaves the history: it stays bounded
		if strings.HasPrefix(k, limHistoryPrefix) && !seen[k] {
			delete(c.history, k)
		}
	}
}

// view is one tab. Views render strings; only the root returns a tea.View.
type view interface {
	// bindings are the keys the view (or its drill-down level on screen) answers to, with what
	// each does and its help; the root serves the keys it does not declare itself from them.
	bindings() []binding
	// sync sets the view's rows (and its levels') from the new poll's Snapshot: rows are built
	// there and when the filter changes, never while drawing.
	sync()
	render(width, height int) string
	// filterable views narrow their table to rows containing the filter text.
	setFilter(text string)
	filterable() bool
	// family is the counter family the view has selected, for inject and traffic ("" for none).
	family() string
	// back leaves a drill-down; it reports whether there was one.
	back() bool
	// crumbs are the drill-down's levels open below the view, for the breadcrumb (none at the
	// view's own table); filterText is the filter of the level on screen.
	crumbs() []string
	filterText() string
	// refresh reads the open drill-down level again (after each poll); nil when there is none.
	refresh() tea.Cmd
}

// Model is the console's root model: it owns polling, the header, tabs, footer and overlays, and
// hands keys it does not use to the active view.
type Model struct {
	c      *console
	views  []view
	active int
	help   help.Model

	ctx     context.Context
	gen     int  // stamps ticks; a tick from an older generation is dropped
	polling bool // a poll is under way; ticks meanwhile are dropped
	paused  bool

	redrawing bool               // a chain of redrawMsgs is running
	err       error              // the last poll's failure, nil when connected
	conn      snapshot.ConnState // the source's word on the last poll: connected, late, a fault
	failures  int                // consecutive failed polls
	retryAt   time.Time          // when the next attempt runs (server clock)

	showHelp     bool
	filtering    bool   // the filter line has the keyboard
	filter       string // per active view
	modal        *modal
	cancelRepair context.CancelFunc // stops the dry run or repair the overlay started
	repairs      int                // overlays opened so far: each one's number
	flash        string             // the last action's outcome
	flashAt      time.Time
	traffic      map[string]bool
	prompt       *prompt     // the Unclaimed view's overlay: a confirmation, or a file's path
	keyConfirm   *keyConfirm // a drill-down write waiting for its confirmation

	// trafficFaults are the failing test traffics' last faults, by family, while they last.
	trafficFaults map[string]TrafficNews
}

// New returns the console model.
func New(opt Options, styles theme.Styles) *Model {
	if opt.WaitWarning <= 0 {
		opt.WaitWarning = time.Minute
	}
	if opt.Refresh < snapshot.MinRefresh {
		opt.Refresh = snapshot.MinRefresh
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Location == nil {
		opt.Location = time.Local
	}
	ctx := opt.Context
	if ctx == nil {
		ctx = context.Background()
	}
	c := &console{styles: styles, keys: DefaultKeyMap(), opt: opt, now: opt.Now, width: 80, height: 24, claims: map[string]claim{}, ctx: ctx}
	h := help.New()
	h.Styles = styles.Help
	m := &Model{c: c, help: h, ctx: ctx, traffic: map[string]bool{}, trafficFaults: map[string]TrafficNews{}}
	c.flash = m.flashf
	m.views = []view{
		newOverview(c), newCounters(c), newTTLView(c),
		newQueues(c), newLimiters(c), newUniques(c), newUnclaimed(c),
	}
	return m
}

// Init starts polling at once, and listens to the test traffic's news when writes are on.
func (m *Model) Init() tea.Cmd {
	if m.c.opt.Actions == nil {
		return tick(m.gen, 0)
	}
	return tea.Batch(tick(m.gen, 0), listenTraffic(m.ctx, m.c.opt.Actions))
}

// Update dispatches each message to its handler.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		return m, m.handleResize(msg)
	case tea.KeyPressMsg:
		return m, m.handleKey(msg)
	case tickMsg:
		return m, m.handleTick(msg)
	case pollMsg:
		return m, m.handlePoll(msg)
	case redrawMsg:
		return m, m.handleRedraw(msg)
	case actionMsg:
		return m, m.handleAction(msg)
	case repairPreviewMsg:
		return m, m.handleRepairPreview(msg)
	case claimMsg:
		return m, m.handleClaim(msg)
	case proposalMsg:
		return m, m.handleProposal(msg)
	case trafficMsg:
		return m, m.handleTraffic(msg)
	case loadedMsg:
		msg.to.loaded(msg.seq, msg.val, msg.err)
	case askMsg:
		m.keyConfirm = msg.kc
	case keyActionMsg:
		return m, m.handleKeyAction(msg)
	case bulkPlanMsg:
		return m, m.handleBulkPlan(msg)
	case bulkTickMsg:
		return m, m.handleBulkTick(msg)
	case bulkDoneMsg:
		return m, m.handleBulkDone(msg)
	case searchMsg:
		return m, msg.to.advance(msg)
	}
	return m, nil
}

func (m *Model) handleResize(msg tea.WindowSizeMsg) tea.Cmd {
	m.c.width, m.c.height = msg.Width, msg.Height
	m.help.SetWidth(msg.Width)
	return nil
}

// handleKey serves, in order: an open overlay, the filter line, the global keys, the view.
func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.keys
	if m.c.bulk != nil && key.Matches(msg, k.ForceQuit, k.Back) { // a bulk action stops between chunks first
		return m.stopBulk()
	}
	if s := m.c.searching; s != nil && s.under() && key.Matches(msg, k.ForceQuit) { // a search stops first
		return s.toggle()
	}
	if key.Matches(msg, k.ForceQuit) || (key.Matches(msg, k.Quit) && !m.filtering && m.modal == nil && m.prompt == nil && m.keyConfirm == nil) {
		return tea.Quit
	}
	switch {
	case m.keyConfirm != nil:
		return m.keyConfirmKey(msg)
	case m.modal != nil:
		return m.modalKey(msg)
	case m.prompt != nil:
		return m.promptKey(msg)
	case m.filtering:
		m.filterKey(msg)
		return nil
	case m.showHelp:
		if key.Matches(msg, k.Help, k.Back) {
			m.showHelp = false
		}
		return nil
	}
	if ok, cmd := handle(m.globalBindings(), msg); ok {
		return cmd
	}
	v := m.views[m.active]
	_, cmd := handle(v.bindings(), msg)
	m.filter = v.filterText() // enter opens a level with a filter of its own
	return cmd
}

func (m *Model) setActive(i int) {
	if i != m.active {
		m.active = i
		m.filter = ""
		for _, v := range m.views {
			v.setFilter("")
		}
	}
}

func (m *Model) setFilter(text string) {
	m.filter = text
	m.views[m.active].setFilter(text)
}

// filterKey edits the filter line: runes add, backspace removes, enter keeps, esc clears.
func (m *Model) filterKey(msg tea.KeyPressMsg) {
	switch {
	case key.Matches(msg, m.c.keys.Back):
		m.filtering = false
		m.setFilter("")
	case key.Matches(msg, m.c.keys.Enter):
		m.filtering = false
	case key.Matches(msg, m.c.keys.Erase):
		if r := []rune(m.filter); len(r) > 0 {
			m.setFilter(string(r[:len(r)-1]))
		}
	case msg.Text != "":
		m.setFilter(m.filter + msg.Text)
	}
}

func (m *Model) togglePause() tea.Cmd {
	m.paused = !m.paused
	m.gen++ // a tick already scheduled is now stale
	if m.paused {
		return nil
	}
	return tick(m.gen, 0)
}

// flashf records an action's outcome for the footer.
func (m *Model) flashf(s string) {
	m.flash, m.flashAt = s, m.c.now()
}
