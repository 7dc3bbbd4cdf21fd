package queueset

import "time"

// Digest is the state of a QueueSet at one moment, for the debug dumps.
type Digest struct {
	Limit, SeatsInUse  int
	Waiting, Executing int
	VirtualTime        float64
	Queues             []QueueDigest
}

// QueueDigest is one queue's state.
type QueueDigest struct {
	Executing, SeatsInUse int
	NextDispatchR         float64
	// InitialSeatsSum, MaxSeatsSum and TotalWork sum the waiting
	// requests (TotalWork in seat-seconds).
	InitialSeatsSum, MaxSeatsSum int
	TotalWork                    float64
	Requests                     []RequestDigest
}

// RequestDigest is one waiting request.
type RequestDigest struct {
	Descr   Descr
	Arrived time.Time
	Work    Work
}

// Dump returns the QueueSet's state.
func (qs *QueueSet) Dump() Digest {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.syncTimeLocked()
	d := Digest{Limit: qs.limit, SeatsInUse: qs.seatsInUse, Waiting: qs.waiting, Executing: qs.executing,
		VirtualTime: qs.virtualTime, Queues: make([]QueueDigest, len(qs.queues))}
	for i, q := range qs.queues {
		qd := QueueDigest{Executing: q.executing, SeatsInUse: q.seatsUsed, NextDispatchR: q.nextDispatchR,
			MaxSeatsSum: q.waitingSeats, TotalWork: q.waitingWork, Requests: make([]RequestDigest, len(q.requests))}
		for j, r := range q.requests {
			qd.InitialSeatsSum += max(r.work.InitialSeats, 1)
			qd.Requests[j] = RequestDigest{Descr: r.Descr, Arrived: r.arrived, Work: r.work}
		}
		d.Queues[i] = qd
	}
	return d
}
