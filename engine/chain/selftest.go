package chain

// Gate is one selftest verdict.
type Gate struct {
	Name   string
	Pass   bool
	Skip   bool   // not applicable to this bundle
	Detail string // the first difference, or why it was skipped
}
