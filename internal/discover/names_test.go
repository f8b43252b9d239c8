package discover

import "testing"

// An entry is named after its pattern's first literal words, or, in a pattern of placeholders
// alone, after its first placeholders.
func TestEntryName(t *testing.T) {
	for pattern, want := range map[string]string{
		"flow:count:<app>:<device>:<ip>:<window>": "flow_count",
		"{<channel>:<ad>}:<window>":               "channel_ad",
		"order_<order>_lock":                      "order_lock",
		"<id>":                                    "id",
		"{}":                                      "keys",
	} {
		if got := entryName(pattern); got != want {
			t.Errorf("entryName(%q) = %q, want %q", pattern, got, want)
		}
	}
}
