package wake

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func received(ch <-chan struct{}) int {
	n := 0
	for {
		select {
		case <-ch:
			n++
		default:
			return n
		}
	}
}

func TestABurstWakesASubscriberOnce(t *testing.T) {
	var h Hub
	git, cancelGit := h.Subscribe("git")
	hg, cancelHg := h.Subscribe("hg")
	defer cancelHg()
	for range 1000 {
		h.Notify("git")
	}
	require.Equal(t, 1, received(git), "the wake-ups not taken yet merge into one")
	require.Equal(t, 0, received(hg), "other visit types sleep on")
	h.NotifyAll()
	require.Equal(t, 1, received(git))
	require.Equal(t, 1, received(hg))
	cancelGit()
	h.Notify("git")
	require.Equal(t, 0, received(git), "a cancelled subscription receives nothing")
}
