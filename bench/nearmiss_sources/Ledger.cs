using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;

namespace Accounts
{
    /// <summary>A double-entry ledger of postings between named accounts.</summary>
    public sealed class Ledger
    {
        private readonly Dictionary<string, decimal> _balances = new(StringComparer.Ordinal);
        private readonly List<Posting> _postings = new();

        public IReadOnlyList<Posting> Postings => _postings;

        public decimal Balance(string account)
        {
            if (string.IsNullOrWhiteSpace(account))
            {
                throw new ArgumentException("An account needs a name.", nameof(account));
            }
            return _balances.TryGetValue(account, out var balance) ? balance : 0m;
        }

        public Posting Post(string from, string to, decimal amount, DateTime when, string memo = "")
        {
            if (amount <= 0m)
            {
                throw new ArgumentOutOfRangeException(nameof(amount), amount, "Amounts are positive.");
            }
            if (string.Equals(from, to, StringComparison.Ordinal))
            {
                throw new InvalidOperationException($"Cannot post from {from} to itself.");
            }
            var posting = new Posting(_postings.Count + 1, from, to, amount, when, memo);
            _postings.Add(posting);
            _balances[from] = Balance(from) - amount;
            _balances[to] = Balance(to) + amount;
            return posting;
        }

        public IEnumerable<string> Statement(string account, CultureInfo culture)
        {
            foreach (var posting in _postings.Where(p => p.From == account || p.To == account))
            {
                var sign = posting.To == account ? "+" : "-";
                yield return string.Format(
                    culture,
                    "{0:yyyy-MM-dd} {1}{2,12:N2} {3}",
                    posting.When,
                    sign,
                    posting.Amount,
                    posting.Memo);
            }
        }

        public bool IsBalanced()
        {
            return _balances.Values.Sum() == 0m;
        }
    }

    public sealed record Posting(int Number, string From, string To, decimal Amount, DateTime When, string Memo);
}
