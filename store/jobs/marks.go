package jobs

// Marks is how a library's keys are recognised under a prefix its user chose (Sidekiq's
// redis-namespace, BullMQ's prefix, kombu's global_keyprefix): by the names the library gives
// its keys alike in every app. Discover follows each prefix such a name is under, and trusts it
// once the prefix's Proof holds. Each library's marks are in <library>_marks.go; a library whose
// prefix is fixed has none.
type Marks interface {
	// Mark reads key as one of the library's marks, under whatever prefix it is.
	Mark(key string) (Mark, bool)
	// Named reports whether key is named as one of the library's keys under some prefix, and
	// that prefix where the name says it: the library's marks may still come.
	Named(key string) (prefix string, ok bool)
	// Proof is what the keys under prefix have shown of the library: nothing yet.
	Proof(prefix string) Proof
}

// Mark is one of a library's keys read by its name.
type Mark struct {
	Prefix string // the prefix or namespace it is under, "" for none
	Strong bool   // it starts a prefix's evidence
	// Member says a sample of it reads one member of the set, or the first element of the
	// list, which tells whose it is; Field is the field of the hash a sample reads ("" none).
	Member bool
	Field  string
	// Held says why a group of such keys alone is proposed no entry ("" for most): a counter
	// family would claim them before the library's entry could (Sidekiq's stat counters).
	Held string
}

// MarkSample is what a sweep read of one sampled mark.
type MarkSample struct {
	Name, Type string
	Member     string // the member or element Mark.Member reads
	Field      string // the value of the field Mark.Field names
}

// Proof is the evidence the keys under one prefix have shown of a library.
type Proof interface {
	// Saw notes a mark named key under the prefix; Sampled notes what a sample of one read.
	Saw(key string)
	Sampled(s MarkSample)
	// Strong reports whether a mark that starts a prefix's evidence was seen.
	Strong() bool
	// Trusted reports whether the evidence holds: the prefix is the library's.
	Trusted() bool
	// Pending reports whether the mark that decides was seen by name and not read yet.
	Pending() bool
	// Queues are the queues the marks named whose lists are named after them.
	Queues() []string
	// Evidence says what the prefix rests on, and why it is not trusted when it is not.
	Evidence() string
}

// maxMarkQueues bounds the queues a Proof keeps.
const maxMarkQueues = 32

// Marks is how the library's keys are recognised under a prefix its user chose; nil for a
// library whose prefix is fixed.
func (l Layout) Marks() Marks {
	if lib := libraryOf(l); lib != nil {
		return lib.marks
	}
	return nil
}

// ByMarksOnly reports whether the library's keys are anyone's by their names (Sidekiq's queues
// set and queue:<name> lists, which Resque keeps too): they are its only under a prefix its
// marks proved, its default one included.
func (l Layout) ByMarksOnly() bool {
	lib := libraryOf(l)
	return lib != nil && lib.byMarks
}

// RegistryText names, in evidence, the keys that stand for the library's registry of queues.
func (l Layout) RegistryText() string {
	if lib := libraryOf(l); lib != nil && lib.registryText != "" {
		return lib.registryText
	}
	return "its queue registry"
}

// KeyPrefix is what every key of the library under s.Prefix starts with: "<prefix>:", or the
// prefix alone where it holds its own separator (kombu's global_keyprefix) or is "".
func (s Source) KeyPrefix() string {
	if lib := libraryOf(s.Layout); s.Prefix == "" || lib != nil && lib.ownSeparator {
		return s.Prefix
	}
	return s.Prefix + ":"
}

// Recognize reports whether key is the library's by its name alone under s's prefix, and
// whether it is where the library registers its queues or a key that stands for that. Names
// the library shares with other programs (Celery's queue lists named after the queue) are not:
// alone they prove nothing, nor are a library's that only its marks prove (ByMarksOnly).
func (s Source) Recognize(key string) (registry, ok bool) {
	lib := libraryOf(s.Layout)
	if lib == nil || lib.byMarks {
		return false, false
	}
	// A prefix starts each of the library's keys as "<prefix>:": checking that costs far less
	// than classify, which every unclaimed key would pay.
	if p := s.Prefix; p != "" && !lib.ownSeparator && !(len(key) > len(p) && key[len(p)] == ':' && key[:len(p)] == p) {
		return false, false
	}
	r := s.reader()
	k, ok := r.classify(key)
	if _, alike := r.(keysReader); !ok || alike && k.Queue != "" {
		return false, false
	}
	if st, ok := r.(registryStandIn); ok && st.standsForRegistry(key) {
		return true, true
	}
	return k.Registry, true
}

// ListsNamedAfterQueues reports whether the library names a queue's list after the queue alone
// under its prefix (kombu does): such a list is anyone's by its name, and the library's entry,
// which learns its queues from its registries, reads it.
func (l Layout) ListsNamedAfterQueues() bool {
	_, ok := Source{Layout: l}.reader().(keysReader)
	return ok
}

// NamedQueue is the queue whose lists registry, one of the library's registry keys, names by
// the queue's own name (Celery's queue named as the exchange), if any.
func (s Source) NamedQueue(registry string) (string, bool) {
	if k, ok := s.reader().(keysReader); ok {
		return k.namedQueue(registry)
	}
	return "", false
}

// registryStandIn is a library's reader with no registry of queues, some of whose keys stand for
// one (BullMQ's once-per-queue keys).
type registryStandIn interface {
	standsForRegistry(key string) bool
}
