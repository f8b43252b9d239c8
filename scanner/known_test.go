package scanner

import (
	"slices"
	"testing"

	"github.com/hourglass-dev/hourglass/store"
	"github.com/hourglass-dev/hourglass/store/jobs"
)

// TestKnownNamesTheQueuesAnEntryNames: a job library's queues an entry names outright are read
// live before any page finds their keys; a glob, or a name the entry excludes, is not a name.
func TestKnownNamesTheQueuesAnEntryNames(t *testing.T) {
	globs := func(texts ...string) store.Globs {
		g, err := store.ParseGlobs(texts)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	spec := JobQueueSpec{Name: "bq", Source: jobs.Source{Layout: jobs.BullMQ}, Queues: globs("emails", "video-*", "old"), Exclude: globs("old")}
	got := withNamed(jobWant{src: spec, found: []string{"video-hd"}})
	if want := []string{"emails", "video-hd"}; !slices.Equal(got, want) {
		t.Errorf("known queues %v, want %v", got, want)
	}
}
