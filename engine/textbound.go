package engine

// MaxBytesPerToken is the tokenizer's bound on the bytes of text one
// token stands for (tokenizer.MaxBytesPerToken), so a front end can refuse
// text that cannot fit the context before it is tokenized; 0 when the
// tokenizer gives none.
func (s *Session) MaxBytesPerToken() int {
	n, ok := s.tok.MaxBytesPerToken()
	if !ok {
		return 0
	}
	return n
}
