package jobs

// Celery's actions on one message, as kombu's redis transport (kombu 5.x) does them:
//
//	return an unacknowledged    QoS.restore_by_tag, what kombu does for a delivery whose
//	  message                   visibility timeout passed (restore_visible) and for a worker's
//	                            deliveries when it stops: the delivery's records leave unacked and
//	                            unacked_index, and the message, marked redelivered (headers and
//	                            delivery_info), is RPUSHed onto each queue its exchange routes it
//	                            to, where the next BRPOP takes it
//	delete a waiting message    one LREM of the message from the first of its queue's lists that
//	                            holds it: kombu offers no deletion of one message (Celery's revoke
//	                            only tells workers to skip a task id), and a queue is those lists
//
// The exchange routes as kombu routes for an exchange its process has not declared: as a direct
// exchange, to the queues bound with the message's routing key (a message of the anonymous
// exchange goes to the queue its routing key names). Where no queue is bound, kombu would drop
// the message; hourglass leaves it unacknowledged instead and says so. The message is read and
// marked here, and pushed by a script (celery_restore.lua) only if its record is unchanged.
//
// Celery keeps ETA and countdown tasks in a worker's memory, not in Redis, so no message has a
// due time to run it at now; and an unacknowledged message is not deleted: the worker holding it
// runs it whatever its record says, and the record is what puts it back if that worker dies.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

var (
	celeryRestore = luaScript("celery_restore")
	celeryDelete  = luaScript("celery_delete")
)

func (j celeryJobs) act(ctx context.Context, rdb redis.UniversalClient, queue string, sec TaskSection, t Task, a TaskAction, _ time.Time) (string, error) {
	switch {
	case sec == SectionWaiting && a == ActionDelete:
		lists := j.celeryListNames(queue)
		i, err := celeryDelete.Run(ctx, rdb, lists, t.Member).Int()
		switch {
		case err != nil:
			return "", actFail(rdb, "Celery delete script (EVALSHA)", lists[0], err)
		case i < 1 || i > len(lists):
			return "", actGone("delete", t, lists[0])
		}
		return fmt.Sprintf("message %s deleted from %s", celeryName(t.Member, t), store.QuoteName(lists[i-1])), nil
	case sec == SectionInFlight && a == ActionReturn:
		return j.actRestore(ctx, rdb, t)
	case sec == SectionInFlight && a == ActionDelete:
		return "", actRefusal("Celery", sec, a, "the worker holding the message runs it whatever its unacked record says, and the record is what puts it back if that worker dies")
	case a == ActionRunNow:
		return "", actRefusal("Celery", sec, a, "Celery keeps ETA and countdown tasks in a worker's memory: no message in Redis has a due time")
	}
	return "", actRefusal("Celery", sec, a, "kombu has no such action there")
}

// actRestore puts an unacknowledged message back on its queues as kombu's restore_by_tag does.
// The task's Member is its delivery tag, the unacked hash's field (its ID is Celery's task id).
func (j celeryJobs) actRestore(ctx context.Context, rdb redis.UniversalClient, t Task) (string, error) {
	tag, unacked := t.Member, j.prefix+"unacked"
	record, err := rdb.HGet(ctx, unacked, tag).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return "", actGone("return", t, unacked)
	case err != nil:
		return "", actFail(rdb, "HGET", unacked, err)
	}
	msg, exchange, routingKey, err := kombuRedelivered(record)
	if err != nil {
		return "", fmt.Errorf("store: return delivery %s: %w; left unacknowledged", store.QuoteName(tag), err)
	}
	if p := kombuPriority(msg); p > 0 {
		// kombu puts it back on the list of its priority step, which the app's priority_steps
		// decide and Redis does not hold: a guess could leave it where no worker reads.
		return "", fmt.Errorf("store: return delivery %s: a message of priority %d goes back to the list of its app's priority step, "+
			"which Redis does not say; left unacknowledged (kombu's restore in the app returns it): %w", store.QuoteName(tag), p, ErrNotSupported)
	}
	queues, err := j.kombuRoute(ctx, rdb, exchange, routingKey)
	if err != nil {
		return "", err
	}
	keys := []string{unacked, j.prefix + "unacked_index"}
	for _, q := range queues {
		keys = append(keys, j.prefix+q)
	}
	n, err := celeryRestore.Run(ctx, rdb, keys, tag, record, msg).Int()
	switch {
	case err != nil:
		return "", actFail(rdb, "Celery restore script (EVALSHA)", unacked, err)
	case n == 0:
		return "", actGone("return", t, unacked)
	}
	return fmt.Sprintf("message %s is back in %s, redelivered", celeryName(msg, t), store.QuoteName(strings.Join(queues, ", "))), nil
}

// kombuRedelivered reads an unacked record, [message, exchange, routing key], and returns the
// message as kombu restores it: "redelivered" set in its headers and then in its properties'
// delivery_info (kombu stops at the first of them the message lacks).
func kombuRedelivered(record string) (msg, exchange, routingKey string, err error) {
	var rec []json.RawMessage
	if json.Unmarshal([]byte(record), &rec) != nil || len(rec) != 3 ||
		json.Unmarshal(rec[1], &exchange) != nil || json.Unmarshal(rec[2], &routingKey) != nil {
		return "", "", "", fmt.Errorf("its record is not kombu's [message, exchange, routing key]")
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(rec[0], &m) != nil || m == nil {
		return "", "", "", fmt.Errorf("its message is not a JSON object")
	}
	if ok, err := markRedelivered(m, "headers"); err != nil {
		return "", "", "", err
	} else if ok {
		if _, err := markRedelivered(m, "properties", "delivery_info"); err != nil {
			return "", "", "", err
		}
	}
	msg, err = encodeJSON(m)
	return msg, exchange, routingKey, err
}

// markRedelivered sets "redelivered": true in the object at path inside obj, each value it does
// not change kept as stored; false when a key on the path is missing (kombu's KeyError, which
// stops its marking), an error when a value on it is not an object (where kombu's restore fails
// and the message is lost).
func markRedelivered(obj map[string]json.RawMessage, path ...string) (bool, error) {
	raw, ok := obj[path[0]]
	if !ok {
		return false, nil
	}
	var inner map[string]json.RawMessage
	if json.Unmarshal(raw, &inner) != nil || inner == nil {
		return false, fmt.Errorf("its %s is not an object (kombu would lose the message)", path[0])
	}
	if len(path) == 1 {
		inner["redelivered"] = json.RawMessage("true")
	} else if ok, err := markRedelivered(inner, path[1:]...); !ok || err != nil {
		return ok, err
	}
	enc, err := encodeJSON(inner)
	obj[path[0]] = json.RawMessage(enc)
	return true, err
}

// kombuRoute names the queues kombu restores a message of exchange with routingKey to.
func (j celeryJobs) kombuRoute(ctx context.Context, rdb redis.UniversalClient, exchange, routingKey string) ([]string, error) {
	if exchange == "" {
		if routingKey == "" {
			return nil, errors.New("store: the message names no exchange and no routing key: kombu has no queue to restore it to; left unacknowledged")
		}
		return []string{routingKey}, nil
	}
	binding := j.prefix + kombuBinding + exchange
	members, err := rdb.SMembers(ctx, binding).Result()
	if err != nil {
		return nil, actFail(rdb, "SMEMBERS", binding, err)
	}
	var queues []string
	for _, m := range members {
		parts := strings.Split(m, kombuSep)
		if len(parts) == 3 && parts[0] == routingKey && parts[2] != "" && !slices.Contains(queues, parts[2]) {
			queues = append(queues, parts[2])
		}
	}
	if len(queues) == 0 {
		return nil, fmt.Errorf("store: no queue is bound to exchange %s with routing key %s (%s): kombu would drop the message; left unacknowledged",
			store.QuoteName(exchange), store.QuoteName(routingKey), store.QuoteName(binding))
	}
	slices.Sort(queues)
	return queues, nil
}

// celeryName names a message by its task id and name (Celery's protocol 2 headers), or by t.
func celeryName(msg string, t Task) string {
	var m struct {
		Headers struct {
			ID   string `json:"id"`
			Task string `json:"task"`
		} `json:"headers"`
	}
	if json.Unmarshal([]byte(msg), &m) != nil || m.Headers.ID == "" {
		return actName(t)
	}
	return store.QuoteName(m.Headers.ID) + " (" + store.QuoteName(m.Headers.Task) + ")"
}

// kombuPriority is a message's properties.priority, 0 when it has none.
func kombuPriority(msg string) int {
	var m struct {
		Properties struct {
			Priority *float64 `json:"priority"`
		} `json:"properties"`
	}
	if json.Unmarshal([]byte(msg), &m) != nil || m.Properties.Priority == nil {
		return 0
	}
	return int(*m.Properties.Priority)
}
