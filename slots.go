package revisit

// SlotRule is the free-slot rule: how many messages may be sent into a
// queue now. A queue bounded at maxLen that holds depth messages has
// FreeSlots(maxLen, depth) free slots; nothing is sent while fewer than
// MinFreeRatio of its bound are free, or none is, and then the free slots
// are filled, PerSend at most. The orchestrator, the runner and the
// commands that send to a queue all send by it.
type SlotRule struct {
	// MinFreeRatio is the least fraction of the queue's bound free before
	// anything is sent, so that sends are not many and small; 0: as soon
	// as one slot is free.
	MinFreeRatio float64
	// PerSend caps the messages of one send; 0 (and anything above) is
	// MaxGrabCount.
	PerSend int
}

// FreeSlots returns how many more messages a queue bounded at maxLen
// takes while it holds depth (messages being published counted in): none
// when it is full or beyond.
func FreeSlots(maxLen int, depth int64) int64 {
	return max(int64(maxLen)-depth, 0)
}

// Slots returns how many messages may be sent now into a queue bounded at
// maxLen that holds depth (messages being published counted in).
func (r SlotRule) Slots(maxLen int, depth int64) int {
	free := FreeSlots(maxLen, depth)
	if free == 0 || float64(free) < float64(maxLen)*r.MinFreeRatio {
		return 0
	}
	most := int64(MaxGrabCount)
	if r.PerSend > 0 {
		most = min(int64(r.PerSend), most)
	}
	return int(min(free, most))
}
