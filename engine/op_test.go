package engine

import "testing"

// TestOpChat: the commands that act on the chat's conversation bring it
// back into the session first; the store's and the history's listings,
// the budgets and marks run on whatever the session holds.
func TestOpChat(t *testing.T) {
	for _, tc := range []struct {
		op         Op
		chat, turn bool
	}{
		{OpSend, true, true}, {OpRegenerate, true, true}, {OpEdit, true, true}, {OpContinue, true, false},
		{OpVersion, true, false}, {OpSettings, true, false}, {OpClear, true, false},
		{OpSave, true, false}, {OpLoad, true, false}, {OpFork, true, false}, {OpAutosave, true, false},
		{OpResume, true, false}, {OpHistoryDelete, true, false}, {OpHistoryRename, true, false},
		{OpDelete, false, false}, {OpRename, false, false}, {OpList, false, false}, {OpHistory, false, false},
		{OpKeep, false, false}, {OpStore, false, false}, {OpMark, false, false},
	} {
		if got := tc.op.chat(); got != tc.chat {
			t.Errorf("%s.chat() = %v, want %v", tc.op, got, tc.chat)
		}
		if got := tc.op.Turn(); got != tc.turn {
			t.Errorf("%s.Turn() = %v, want %v", tc.op, got, tc.turn)
		}
	}
}
