package scanner

// Master is the address of the master the page came from: "" on a standalone server, and for a
// Step's page, which may span masters (SeenBy then splits its keys).
func (p Page) Master() string { return p.master }

// Slots are the hash slots of the first and last key SCAN returned, on a cluster (-1 otherwise).
// A page that begins in the slot the last one ended in continues it: where a server walks its
// keys slot by slot, the two are one cluster of the sample (docs/estimates.md).
func (p Page) Slots() (first, last int) { return p.firstSlot, p.lastSlot }
