package fleet

// Waves splits n clusters, in order, into waves of indexes: the first
// canary ones alone, then waves of waveSize (0: all the rest in one).
func Waves(n, canary, waveSize int) [][]int {
	var waves [][]int
	next := 0
	take := func(size int) {
		end := min(next+size, n)
		wave := make([]int, 0, end-next)
		for ; next < end; next++ {
			wave = append(wave, next)
		}
		waves = append(waves, wave)
	}
	if canary > 0 && n > 0 {
		take(canary)
	}
	for next < n {
		if waveSize <= 0 {
			take(n)
			continue
		}
		take(waveSize)
	}
	return waves
}
