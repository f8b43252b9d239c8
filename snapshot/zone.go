package snapshot

// ZoneMismatch says a family's hour windows look cut in another zone than the one configured: the
// current hour (in the configured zone) has no key, while the newest hour window is the current
// hour at another offset.
type ZoneMismatch struct {
	// Configured is the zone configured and its offset now: "Asia/Shanghai (+08:00)", or for
	// Local this machine's zone when known, "Local (Asia/Shanghai, +08:00)".
	Configured string `json:"configured"`
	// Data is the zone the windows look cut in, as a config's timezone takes it: "UTC",
	// this machine's zone by name, or an offset such as "+08:00".
	Data   string `json:"data"`
	Offset string `json:"offset"` // the data's offset from UTC: "+00:00"
	Newest string `json:"newest_window"`
	// Hours is how far the newest window lies from the current one in the configured zone
	// (negative: behind).
	Hours   int    `json:"hours"`
	Message string `json:"message"`
}
