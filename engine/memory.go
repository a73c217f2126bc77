package engine

// sampleMemory reads the three ledgers and tracks their peaks: the
// process's own footprint, what the model holds outside it (mapped
// sidecars; on a Mac the wired Core ML weights show in Wired) and the
// machine's available memory.
func (s *Session) sampleMemory() Memory {
	if s.Memory == nil {
		return s.peak
	}
	m, err := s.Memory()
	if err != nil {
		return s.peak
	}
	p := &s.peak
	p.FootprintBytes = m.Footprint
	p.FootprintPeakBytes = max(p.FootprintPeakBytes, m.Footprint)
	p.ModelBytes = m.Mapped
	if p.ModelBytes == 0 {
		p.ModelBytes = m.Wired
	}
	p.ModelPeakBytes = max(p.ModelPeakBytes, p.ModelBytes)
	p.AvailableBytes = m.Available
	if p.AvailableLowBytes == 0 || m.Available < p.AvailableLowBytes {
		p.AvailableLowBytes = m.Available
	}
	return *p
}
