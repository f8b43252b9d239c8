package cli

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/hourglass-dev/hourglass/internal/redistest"
	"github.com/hourglass-dev/hourglass/store"
)

// The zero tests' walk over Bloom filters: filters written by the store (one that scales, one
// that does not, one whose bits were all set since, whose elements are unknown) and a hash of the pattern without their metadata, each 0 of the JSON one their
// metadata makes, the report's and the metrics' figures null where the JSON's are.

// bloomsCase writes the filters and returns the case, with each filter's metadata read back.
func bloomsCase(t *testing.T) (zeroCase, map[string]store.BloomMeta) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	st := store.New(rdb, store.Options{})
	metas := map[string]store.BloomMeta{}
	for key, o := range map[string]struct {
		opt store.BloomOptions
		n   int
	}{
		"bf:grows": {store.BloomOptions{Capacity: 500, ErrorRate: 0.01}, 1200},
		"bf:fixed": {store.BloomOptions{Capacity: 100, ErrorRate: 0.001, Expansion: -1}, 60},
		"bf:full":  {store.BloomOptions{Capacity: 10, ErrorRate: 0.1, Expansion: -1}, 5},
	} {
		b, err := st.Bloom(key, o.opt)
		if err != nil {
			t.Fatal(err)
		}
		elems := make([]string, o.n)
		for i := range elems {
			elems[i] = fmt.Sprint(key, i)
		}
		if _, err := b.AddMany(t.Context(), elems...); err != nil {
			t.Fatal(err)
		}
		if metas[key], err = store.ReadBloomMeta(t.Context(), rdb, key); err != nil {
			t.Fatal(err)
		}
	}
	// Every bit of bf:full set, as by a writer of its own: the elements it holds cannot be told.
	part := metas["bf:full"].Parts[0]
	rdb.Set(t.Context(), part.Key, strings.Repeat("\xff", int(part.Bits+7)/8), 0)
	rdb.HSet(t.Context(), "bf:other", "field", "1")
	return zeroCase{name: "blooms", path: libraryConfig(t, srv.Addr, "[[bloom]]\nname = \"seen\"\npattern = \"bf:<name>\"\n"), keys: -1}, metas
}

// bloomZero says whether a filter's metadata makes a 0 of its JSON row.
func bloomZero(metas map[string]store.BloomMeta, z zeroLeaf) string {
	f := z.chain[2]
	meta, ok := metas[fmt.Sprint(f["key"])]
	if ok && z.shape == "blooms[].filters[].expansion" && meta.Expansion == 0 {
		return "the filter does not scale: its metadata's expansion is 0"
	}
	return ""
}

// bloomColumns are the report's filter columns and the JSON fields they show (a figure's
// value).
var bloomColumns = map[string]string{"CAPACITY": "capacity", "SUB-FILTERS": "sub_filters", "ADDED": "added", "ELEMENTS": "elements",
	"FILL": "fill_ratio", "FALSE POSITIVES": "false_positive_rate", "TARGET": "target_error_rate", "MEMORY": "memory_bytes"}

// bloomRow is a filter's JSON row with each figure's value in its place (null stays null).
func bloomRow(doc map[string]any, bloom, key string) map[string]any {
	filters, _ := find(list(doc, "blooms"), "name", bloom)["filters"].([]any)
	row := find(filters, "key", key)
	if row == nil {
		return nil
	}
	row = maps.Clone(row)
	for _, f := range []string{"elements", "fill_ratio", "false_positive_rate"} {
		if fig, ok := row[f].(map[string]any); ok {
			row[f] = fig["value"]
		}
	}
	return row
}

// bloomSeries finds the JSON row and field a filter's series exports.
func bloomSeries(doc map[string]any, s series) (map[string]any, string, bool) {
	field, ok := map[string]string{"hourglass_bloom_false_positive_rate": "false_positive_rate", "hourglass_bloom_fill_ratio": "fill_ratio",
		"hourglass_bloom_elements": "elements", "hourglass_bloom_added": "added", "hourglass_bloom_memory_bytes": "memory_bytes",
		"hourglass_bloom_target_error_rate": "target_error_rate"}[s.name]
	if !ok {
		return nil, "", false
	}
	return bloomRow(doc, s.labels["bloom"], s.labels["key"]), field, true
}

// TestNoZeroThatIsNotKnownInBlooms runs the walks of TestNoZeroThatIsNotKnown over filters.
func TestNoZeroThatIsNotKnownInBlooms(t *testing.T) {
	c, metas := bloomsCase(t)
	code, out, errOut := hg(t, "snapshot", "--json", "--config", c.path)
	if code != exitOK {
		t.Fatalf("snapshot --json exit %d: %s", code, errOut)
	}
	doc := decodeJSON(t, out)
	filters, _ := list(doc, "blooms")[0].(map[string]any)["filters"].([]any)
	if len(filters) != 3 || bloomRow(doc, "seen", "bf:full")["elements"] != nil {
		t.Fatalf("filters %v", filters)
	}
	var zs []zeroLeaf
	zeroLeaves(doc, "", "", nil, &zs)
	for _, z := range zs {
		if why := c.whyZero(doc, z); why == "" && (!strings.HasPrefix(z.shape, "blooms[].filters[].") || bloomZero(metas, z) == "") {
			t.Errorf("%s is 0, and the data does not make it 0", z.path)
		}
	}
	checkReport(t, c, doc)
	for _, s := range scrapeServe(t, c.path, "hourglass_bloom_fill_ratio") {
		where := fmt.Sprintf("metrics %s%v", s.name, s.labels)
		obj, field, ok := bloomSeries(doc, s)
		if !ok {
			obj, field, ok = seriesField(doc, s)
		}
		switch {
		case s.name == "hourglass_bloom_over_target":
			if f := bloomRow(doc, s.labels["bloom"], s.labels["key"]); f == nil || f["over_target"] != (s.value == 1) {
				t.Errorf("%s where the JSON's over_target is %v", where, f["over_target"])
			}
		case s.name == "hourglass_bloom_filters":
			want := map[string]float64{"read": 3, "unreadable": 1}[s.labels["state"]]
			if s.value != want {
				t.Errorf("%s, want %v", where, want)
			}
		case !ok && s.value == 0 && zeroSeriesOK[s.name] == "":
			t.Errorf("%s is 0, and no figure of the JSON accounts for it", where)
		case !ok:
		case obj == nil || obj[field] == nil:
			t.Errorf("%s: a series where the JSON has no figure", where)
		case s.value == 0 && !zeroInJSON(obj, field, s):
			t.Errorf("%s is 0 where the JSON's %s is %v", where, field, obj[field])
		}
	}
}
