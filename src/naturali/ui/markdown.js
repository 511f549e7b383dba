// A small, safe Markdown renderer for record bodies: headings, paragraphs, lists, code
// blocks, inline code, bold, italic, links and [[wiki links]]. Everything is escaped first;
// only the tags made here are emitted (no raw HTML from the record passes through).
const escape = (text) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function inline(text) {
  return escape(text)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^*])\*([^*]+)\*/g, '$1<em>$2</em>')
    .replace(/\[\[([^\]]+)\]\]/g, '<span class="tag">$1</span>')
    .replace(/\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/g, '<a href="$2" rel="noopener noreferrer">$1</a>');
}

export function markdown(source) {
  const out = [];
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  let paragraph = [];
  let items = null;
  const flush = () => {
    if (paragraph.length) out.push(`<p>${inline(paragraph.join(' '))}</p>`);
    if (items) out.push(`<ul>${items.map((i) => `<li>${inline(i)}</li>`).join('')}</ul>`);
    paragraph = [];
    items = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith('```')) {
      flush();
      const code = [];
      for (i++; i < lines.length && !lines[i].startsWith('```'); i++) code.push(lines[i]);
      out.push(`<pre><code>${escape(code.join('\n'))}</code></pre>`);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const item = /^\s*[-*]\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      out.push(`<h${heading[1].length}>${inline(heading[2])}</h${heading[1].length}>`);
    } else if (item) {
      if (paragraph.length) flush();
      (items ??= []).push(item[1]);
    } else if (!line.trim()) {
      flush();
    } else {
      if (items) flush();
      paragraph.push(line.trim());
    }
  }
  flush();
  return out.join('\n');
}
