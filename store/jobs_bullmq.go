package store

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// bullmqJobs reads BullMQ's layout. (Not read yet: every queue reports the error below.)
type bullmqJobs struct{ prefix string }

func newBullMQJobs(prefix string) jobReader { return bullmqJobs{prefix: prefix} }

func (j bullmqJobs) classify(string) (JobKey, bool) { return JobKey{}, false }
func (j bullmqJobs) registries() []string           { return nil }
func (j bullmqJobs) registered(context.Context, redis.Cmdable, string) ([]string, error) {
	return nil, nil
}
func (j bullmqJobs) stats(context.Context, redis.Cmdable, string, time.Time) (JobStats, error) {
	return JobStats{}, errors.New("layout not read yet")
}
func (j bullmqJobs) shared(context.Context, redis.Cmdable, time.Time) (*JobStats, error) {
	return nil, nil
}
func (j bullmqJobs) notes() []string { return nil }
