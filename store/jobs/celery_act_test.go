package jobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/internal/redistest"
)

// celeryView is what store/jobs/testdata/celery/read.py prints: each queue's messages as kombu's
// consumer takes them, and what is left unacknowledged.
type celeryView struct {
	Queues       map[string][]celeryTaken `json:"queues"`
	Unacked      int64                    `json:"unacked"`
	UnackedIndex int64                    `json:"unacked_index"`
}

// celeryTaken is a message kombu's consumer took.
type celeryTaken struct {
	ID                 string `json:"id"`
	Task               string `json:"task"`
	Redelivered        bool   `json:"redelivered"`
	HeadersRedelivered bool   `json:"headers_redelivered"`
}

func readCelery(t *testing.T, rdb *redis.Client, prefix string, queues ...string) celeryView {
	t.Helper()
	var v celeryView
	redistest.RunFixture(t, redistest.Interpreter(t, "python3", "celery", "kombu.transport.redis"), "testdata/celery", &v,
		append([]string{"read.py", "redis://" + rdb.Options().Addr + "/0", prefix}, queues...)...)
	return v
}

// celeryBody is a kombu message's body and headers, less the redelivered mark.
func celeryBody(t *testing.T, msg json.RawMessage) (string, map[string]json.RawMessage) {
	t.Helper()
	var m struct {
		Body    json.RawMessage            `json:"body"`
		Headers map[string]json.RawMessage `json:"headers"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		t.Fatalf("message %s: %v", msg, err)
	}
	delete(m.Headers, "redelivered")
	return string(m.Body), m.Headers
}

// celeryShape is a message's keys, its headers' and its properties' keys, and its redelivered
// marks: what a restore changes, and what two messages restored alike share.
func celeryShape(t *testing.T, msg string) string {
	t.Helper()
	var m map[string]json.RawMessage
	var headers, props, info map[string]json.RawMessage
	if json.Unmarshal([]byte(msg), &m) != nil || json.Unmarshal(m["headers"], &headers) != nil ||
		json.Unmarshal(m["properties"], &props) != nil || json.Unmarshal(props["delivery_info"], &info) != nil {
		t.Fatalf("not a kombu message: %s", msg)
	}
	return fmt.Sprint(slices.Sorted(maps.Keys(m)), slices.Sorted(maps.Keys(headers)), slices.Sorted(maps.Keys(props)),
		slices.Sorted(maps.Keys(info)), string(headers["redelivered"]), string(info["redelivered"]))
}

// TestCeleryActsAsKombu: a message a consumer took without acknowledging is returned as kombu's
// restore_by_tag returns it (its records gone, the message marked redelivered and unchanged
// otherwise, the next one kombu's consumer takes from its queue), and a waiting message of a
// priority list is deleted; kombu's own consumer then takes exactly the messages left. Acting on
// a message no longer there writes nothing, and what kombu does not offer is refused.
func TestCeleryActsAsKombu(t *testing.T) {
	for _, prefix := range []string{"", "myapp:"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			rdb, rep := celeryFixture(t, prefix)
			src := Source{Layout: Celery, Prefix: prefix}
			ctx, now := t.Context(), time.Now()
			held := rep.Held[0] // the message taken from the queue "celery"
			record := rdb.HGet(ctx, prefix+"unacked", held.Tag).Val()
			var rec []json.RawMessage
			if err := json.Unmarshal([]byte(record), &rec); err != nil || len(rec) != 3 {
				t.Fatalf("unacked record %q: %v", record, err)
			}
			// The task as the console's page lists it.
			page, err := src.SharedQueue().Tasks(ctx, rdb, SectionInFlight, 0, MaxTaskPage, now)
			i := slices.IndexFunc(page.Tasks, func(t Task) bool { return t.Member == held.Tag })
			if err != nil || i < 0 {
				t.Fatalf("the unacked page %+v (%v) lacks delivery %s", page, err, held.Tag)
			}
			line, err := src.SharedQueue().Act(ctx, rdb, SectionInFlight, page.Tasks[i], ActionReturn, now)
			if err != nil {
				t.Fatalf("return: %q %v", line, err)
			}
			pushed := rdb.LIndex(ctx, prefix+"celery", -1).Val()
			wantBody, wantHeaders := celeryBody(t, rec[0])
			body, headers := celeryBody(t, json.RawMessage(pushed))
			if body != wantBody || len(headers) != len(wantHeaders) || string(headers["id"]) != string(wantHeaders["id"]) {
				t.Fatalf("the message restored %s is not the one taken %s", pushed, rec[0])
			}
			urgent := rdb.LRange(ctx, prefix+"mail"+kombuSep+"3", 0, -1).Val()
			if len(urgent) != 1 {
				t.Fatalf("mail's priority list: %q", urgent)
			}
			var u struct{ Headers struct{ ID string } }
			_ = json.Unmarshal([]byte(urgent[0]), &u)
			if _, err := src.Queue("mail").Act(ctx, rdb, SectionWaiting, Task{Member: urgent[0]}, ActionDelete, now); err != nil {
				t.Fatal(err)
			}

			before := dumpKeys(t, rdb)
			_, err = src.SharedQueue().Act(ctx, rdb, SectionInFlight, Task{Member: held.Tag, ID: held.ID}, ActionReturn, now)
			wantGone(t, rdb, before, "second return", err)
			_, err = src.Queue("mail").Act(ctx, rdb, SectionWaiting, Task{Member: urgent[0]}, ActionDelete, now)
			wantGone(t, rdb, before, "second delete", err)
			other := Task{Member: rep.Held[1].Tag, ID: rep.Held[1].ID}
			for _, a := range []TaskAction{ActionDelete, ActionRunNow} {
				if _, err := src.SharedQueue().Act(ctx, rdb, SectionInFlight, other, a, now); !errors.Is(err, ErrNotSupported) {
					t.Errorf("%s of an unacked message: %v, want ErrNotSupported", a, err)
				}
			}
			wantUnchanged(t, rdb, before, "refusals")

			// kombu restores the other delivery itself: its message is marked as ours is.
			v := readCelery(t, rdb, prefix, "--restore", rep.Held[1].Tag)
			theirs := rdb.LIndex(ctx, prefix+"mail", -1).Val()
			if a, b := celeryShape(t, pushed), celeryShape(t, theirs); a != b {
				t.Errorf("restored by hourglass %s\nby kombu %s", a, b)
			}
			v = readCelery(t, rdb, prefix, "celery", "mail")
			got := v.Queues["celery"]
			if len(got) != 3 || got[0].ID != held.ID || !got[0].Redelivered || !got[0].HeadersRedelivered {
				t.Errorf("kombu takes from celery %+v, want the restored %s first, redelivered, then the 2 waiting", got, held.ID)
			}
			mail := v.Queues["mail"]
			if len(mail) != 3 || mail[0].ID != rep.Held[1].ID || slices.ContainsFunc(mail, func(m celeryTaken) bool { return m.ID == u.Headers.ID }) {
				t.Errorf("kombu takes from mail %+v, want the one it restored and the 2 left, without the deleted %s", mail, u.Headers.ID)
			}
			if v.Unacked != 0 || v.UnackedIndex != 0 {
				t.Errorf("unacked %d, index %d: want none", v.Unacked, v.UnackedIndex)
			}
		})
	}
}

// TestCeleryReturnLeavesWhatKombuWouldDrop: a delivery whose exchange routes its routing key to no
// queue stays unacknowledged (kombu would drop it), and nothing is written.
func TestCeleryReturnLeavesWhatKombuWouldDrop(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	rdb.HSet(ctx, "unacked", "tag-1", `[{"body":"e30=","headers":{"id":"x"},"properties":{"delivery_info":{}}},"celery","nowhere"]`)
	rdb.ZAdd(ctx, "unacked_index", redis.Z{Score: 1, Member: "tag-1"})
	rdb.SAdd(ctx, "_kombu.binding.celery", "celery"+kombuSep+kombuSep+"celery")
	before := dumpKeys(t, rdb)
	_, err := (Source{Layout: Celery}).SharedQueue().Act(ctx, rdb, SectionInFlight, Task{Member: "tag-1"}, ActionReturn, time.Now())
	if err == nil || errors.Is(err, ErrTaskGone) {
		t.Fatalf("return of an unroutable message: %v", err)
	}
	wantUnchanged(t, rdb, before, "unroutable return")
}

// A message of a priority above 0 goes back to its priority step's list, which the app's
// priority_steps decide: return refuses it and writes nothing.
func TestCeleryReturnRefusesAPriorityMessage(t *testing.T) {
	rdb, rep := celeryFixture(t, "")
	src := Source{Layout: Celery}
	ctx := t.Context()
	held := rep.Held[0]
	var rec []json.RawMessage
	if err := json.Unmarshal([]byte(rdb.HGet(ctx, "unacked", held.Tag).Val()), &rec); err != nil || len(rec) != 3 {
		t.Fatalf("unacked record: %v", err)
	}
	// The delivery as kombu recorded it, with the priority a producer would have given it.
	var msg map[string]any
	if err := json.Unmarshal(rec[0], &msg); err != nil {
		t.Fatal(err)
	}
	msg["properties"].(map[string]any)["priority"] = 5
	rec[0], _ = json.Marshal(msg)
	record, _ := json.Marshal(rec)
	if err := rdb.HSet(ctx, "unacked", held.Tag, record).Err(); err != nil {
		t.Fatal(err)
	}
	before := dumpKeys(t, rdb)
	_, err := src.SharedQueue().Act(ctx, rdb, SectionInFlight, Task{Member: held.Tag, ID: held.ID}, ActionReturn, time.Now())
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "priority 5") {
		t.Fatalf("return of a priority-5 message: %v, want ErrNotSupported naming the priority", err)
	}
	wantUnchanged(t, rdb, before, "a refused return")
}
