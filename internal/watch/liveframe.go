package watch

import (
	"github.com/hourglass-dev/hourglass/internal/estimate"
	"github.com/hourglass-dev/hourglass/scanner"
)

// liveFrame is the pages the sweeps walked since a family's window began, per master. SCAN's
// order has nothing to do with key names, so until a sweep has counted the window whole, the
// window's keys those pages offered are a sample of the window's keys, drawn a page at a time:
// the family's live figures are scaled from it (livescale.go), as the sweep's estimates are.
type liveFrame struct {
	masters map[string]*frameMaster
	seq     int // the clusters made so far
	// seen is the window's keys the frame's pages offered.
	seen int
}

// frameMark is one master's part of a frame as one read saw it: its clusters (the open one
// counted as closed), the last of them, and whether the master was walked whole.
type frameMark struct {
	frame estimate.Frame
	seq   int
	full  bool
}

// frameMaster is one master's part of a frame: its clusters (a page, or a run of pages in one
// hash slot, as the sweep's estimates count them) and the window's values they read.
type frameMaster struct {
	frame    estimate.Frame // the closed clusters: how many, their keys and the keys' square
	static   estimate.Sum   // the window's values the closed clusters' pages read
	open     *liveCluster   // the cluster still growing; nil before the first page
	cur      *liveCluster   // the cluster of the page being offered; nil when not walked
	lastSlot int
	// full is set once the pages walked since the window began hold as many keys as the master
	// (DBSIZE): every key has been offered, and a later page would offer some twice.
	full bool
}

// liveCluster is one cluster of a frame: the keys SCAN returned in its pages (in families or
// not), and the sum of the window's values its pages read, as they read them. The growth since
// is the live reads' to estimate.
type liveCluster struct {
	master       string
	seq          int // its place in the frame: the n-th cluster made
	keys, static float64
}

// offered counts a window key of value v a page of cluster c offered. A nil cluster (a page
// not walked into the frame) counts nothing.
func (lf *liveFrame) offered(c *liveCluster, v int64) {
	if c != nil {
		c.static += float64(v)
		lf.seen++
	}
}

// master returns addr's part of the frame, made when first asked for.
func (lf *liveFrame) master(addr string) *frameMaster {
	if lf.masters == nil {
		lf.masters = map[string]*frameMaster{}
	}
	fm := lf.masters[addr]
	if fm == nil {
		fm = &frameMaster{lastSlot: -1}
		lf.masters[addr] = fm
	}
	return fm
}

// add walks page p into the frame: into the open cluster when it runs on in the hash slot that
// cluster ended in (or SCAN returned no key in it), else into a new one. dbsize is the keys each
// master held when last read: a master whose pages since the window began hold as many is full,
// and its later pages are not walked into the frame.
func (lf *liveFrame) add(p scanner.Page, dbsize map[string]int64) {
	addr := pageMaster(p)
	fm := lf.master(addr)
	fm.cur = nil
	if fm.full {
		return
	}
	first, last := p.Slots()
	runsOn := p.Seen == 0 || len(p.SeenBy) > 0 && first >= 0 && first == fm.lastSlot // slots are a cluster's only
	if fm.open == nil || !runsOn {
		fm.closeOpen()
		lf.seq++
		fm.open = &liveCluster{master: addr, seq: lf.seq}
	}
	fm.open.keys += float64(p.Seen)
	if p.Seen > 0 {
		fm.lastSlot = last
	}
	fm.cur = fm.open
	if n := dbsize[addr]; n > 0 && fm.frame.Keys+fm.open.keys >= float64(n) {
		fm.full = true
	}
}

// mark is the frame as a read sees it, per master.
func (lf *liveFrame) mark() map[string]frameMark {
	out := make(map[string]frameMark, len(lf.masters))
	for addr, fm := range lf.masters {
		fr, _ := fm.closed()
		out[addr] = frameMark{frame: fr, seq: lf.seq, full: fm.full}
	}
	return out
}

// cluster is the cluster page p was walked into, nil when it was not.
func (lf *liveFrame) cluster(p scanner.Page) *liveCluster {
	return lf.master(pageMaster(p)).cur
}

// closeOpen adds the open cluster to the closed ones.
func (fm *frameMaster) closeOpen() {
	if c := fm.open; c != nil && (c.keys > 0 || c.static != 0) {
		fm.frame.Add(c.keys)
		fm.static.Add(c.keys, c.static)
	}
	fm.open = nil
}

// closed is the master's frame and static sums with the open cluster counted as closed.
func (fm *frameMaster) closed() (estimate.Frame, estimate.Sum) {
	fr, st := fm.frame, fm.static
	if c := fm.open; c != nil && (c.keys > 0 || c.static != 0) {
		fr.Add(c.keys)
		st.Add(c.keys, c.static)
	}
	return fr, st
}

// pageMaster is the master a page came from: its own, or the one that returned most of its
// keys for a Step's page.
func pageMaster(p scanner.Page) string {
	addr, most := p.Master(), 0
	if addr != "" {
		return addr
	}
	for a, n := range p.SeenBy {
		if n > most || n == most && a < addr {
			addr, most = a, n
		}
	}
	return addr
}
