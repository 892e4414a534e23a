// Package inventory serves the stock levels of a small warehouse over HTTP.
package inventory

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Item is one kind of thing kept on the shelves.
type Item struct {
	SKU       string    `json:"sku"`
	Name      string    `json:"name"`
	Quantity  int       `json:"quantity"`
	Reserved  int       `json:"reserved"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ErrNotEnough is returned when a reservation asks for more than is free.
var ErrNotEnough = errors.New("not enough stock")

// Store keeps items in memory, safe for concurrent use.
type Store struct {
	mu    sync.RWMutex
	items map[string]*Item
	clock func() time.Time
}

// NewStore returns an empty store that stamps changes with clock.
func NewStore(clock func() time.Time) *Store {
	if clock == nil {
		clock = time.Now
	}
	return &Store{items: make(map[string]*Item), clock: clock}
}

// Free is how many units can still be reserved.
func (it *Item) Free() int {
	return it.Quantity - it.Reserved
}

// Reserve holds n units of sku for an order.
func (s *Store) Reserve(sku string, n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	item, ok := s.items[sku]
	if !ok {
		return fmt.Errorf("reserve %q: unknown item", sku)
	}
	if n <= 0 {
		return fmt.Errorf("reserve %q: quantity must be positive, got %d", sku, n)
	}
	if item.Free() < n {
		return fmt.Errorf("reserve %q: %w (free %d, asked %d)", sku, ErrNotEnough, item.Free(), n)
	}
	item.Reserved += n
	item.UpdatedAt = s.clock()
	return nil
}

// Restock adds n units of sku, creating the item if it is new.
func (s *Store) Restock(sku, name string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	item, ok := s.items[sku]
	if !ok {
		item = &Item{SKU: sku, Name: name}
		s.items[sku] = item
	}
	item.Quantity += n
	item.UpdatedAt = s.clock()
}

// List returns every item, sorted by SKU.
func (s *Store) List() []Item {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Item, 0, len(s.items))
	for _, item := range s.items {
		out = append(out, *item)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].SKU < out[j].SKU
	})
	return out
}

// ServeHTTP answers GET with the item list and POST with a reservation.
func (s *Store) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(s.List()); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	case http.MethodPost:
		n, err := strconv.Atoi(r.URL.Query().Get("n"))
		if err != nil {
			http.Error(w, "n must be a whole number", http.StatusBadRequest)
			return
		}
		if err := s.Reserve(r.URL.Query().Get("sku"), n); err != nil {
			status := http.StatusBadRequest
			if errors.Is(err, ErrNotEnough) {
				status = http.StatusConflict
			}
			http.Error(w, err.Error(), status)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}
