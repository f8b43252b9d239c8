package store

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// rqJobs reads RQ's layout. (Not read yet: every queue reports the error below.)
type rqJobs struct{ prefix string }

func newRQJobs(prefix string) jobReader { return rqJobs{prefix: prefix} }

func (j rqJobs) classify(string) (JobKey, bool) { return JobKey{}, false }
func (j rqJobs) registries() []string           { return nil }
func (j rqJobs) registered(context.Context, redis.Cmdable, string) ([]string, error) {
	return nil, nil
}
func (j rqJobs) stats(context.Context, redis.Cmdable, string, time.Time) (JobStats, error) {
	return JobStats{}, errors.New("layout not read yet")
}
func (j rqJobs) shared(context.Context, redis.Cmdable, time.Time) (*JobStats, error) {
	return nil, nil
}
func (j rqJobs) notes() []string { return nil }
