//! The .jmx file as JMeter writes it (2.13 to 5.6): a `jmeterTestPlan` whose
//! `hashTree` pairs each test element with the `hashTree` of its children.
//! Read once with roxmltree into owned [`Element`]s; nothing here knows what
//! an element means (build.rs does).

use crate::JmxError;

/// One property of a test element, as its `*Prop` tag holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Prop {
    /// `stringProp`, `boolProp`, `intProp`, `longProp`, `doubleProp` (its
    /// `<value>` child in JMeter 2.x/3.x files), kept as written.
    Text(String),
    /// `elementProp`: a nested element (Arguments, a LoopController, ...).
    Element(Box<Element>),
    /// `collectionProp`: a list of properties (HTTP arguments, headers, ...).
    List(Vec<(String, Prop)>),
}

/// One test element: its tag, class, name, properties and children.
#[derive(Debug, Clone, PartialEq)]
pub struct Element {
    /// The XML tag (`HTTPSamplerProxy`, `ThreadGroup`, ...).
    pub tag: String,
    /// `testclass` (the tag when absent, as in elementProps).
    pub class: String,
    /// `guiclass`, which tells HTTP Request Defaults from other ConfigTestElements.
    pub gui: String,
    /// `testname` (for elementProps, their `name`).
    pub name: String,
    /// False for `enabled="false"`.
    pub enabled: bool,
    /// The 1-based line of the start tag, for messages.
    pub line: u32,
    pub props: Vec<(String, Prop)>,
    /// The elements of the following `hashTree`.
    pub children: Vec<Element>,
}

impl Element {
    fn prop(&self, name: &str) -> Option<&Prop> {
        self.props.iter().find(|(n, _)| n == name).map(|(_, p)| p)
    }

    /// A text property; None when absent or empty.
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.prop(name) {
            Some(Prop::Text(t)) if !t.trim().is_empty() => Some(t.as_str()),
            _ => None,
        }
    }

    /// A text property as written, blank or not (argument names and
    /// values, where JMeter keeps whitespace); None when absent.
    pub fn raw(&self, name: &str) -> Option<&str> {
        match self.prop(name) {
            Some(Prop::Text(t)) => Some(t.as_str()),
            _ => None,
        }
    }

    /// A boolean property (`true`, case-insensitive, as Java reads it).
    pub fn flag(&self, name: &str) -> Option<bool> {
        self.text(name)
            .map(|t| t.trim().eq_ignore_ascii_case("true"))
    }

    pub fn element(&self, name: &str) -> Option<&Element> {
        match self.prop(name) {
            Some(Prop::Element(e)) => Some(e),
            _ => None,
        }
    }

    pub fn list(&self, name: &str) -> &[(String, Prop)] {
        match self.prop(name) {
            Some(Prop::List(items)) => items,
            _ => &[],
        }
    }

    /// `testname (class)`, how messages name an element.
    pub fn describe(&self) -> String {
        format!("'{}' ({})", self.name, self.class)
    }
}

/// Parses the text of a .jmx file into the top-level elements (the TestPlan).
pub fn parse_jmx(file: &str, text: &str) -> Result<Vec<Element>, JmxError> {
    let not_a_plan = |why: String| JmxError::new(format!("{file}: not a JMeter test plan: {why}"));
    let document = roxmltree::Document::parse(text).map_err(|e| not_a_plan(e.to_string()))?;
    let root = document.root_element();
    if root.tag_name().name() != "jmeterTestPlan" {
        return Err(not_a_plan(format!(
            "the root element is <{}>, not <jmeterTestPlan>",
            root.tag_name().name()
        )));
    }
    let tree = element_children(root)
        .find(|n| n.tag_name().name() == "hashTree")
        .ok_or_else(|| not_a_plan("<jmeterTestPlan> holds no <hashTree>".into()))?;
    let elements = hash_tree(&document, tree);
    if !elements.iter().any(|e| e.class == "TestPlan") {
        return Err(not_a_plan("no TestPlan element".into()));
    }
    Ok(elements)
}

fn element_children<'a, 'input>(
    node: roxmltree::Node<'a, 'input>,
) -> impl Iterator<Item = roxmltree::Node<'a, 'input>> {
    node.children().filter(roxmltree::Node::is_element)
}

/// A `hashTree`: elements, each followed by its own `hashTree` of children.
fn hash_tree(document: &roxmltree::Document, tree: roxmltree::Node) -> Vec<Element> {
    let mut elements: Vec<Element> = Vec::new();
    for node in element_children(tree) {
        if node.tag_name().name() == "hashTree" {
            if let Some(last) = elements.last_mut() {
                last.children = hash_tree(document, node);
            }
        } else {
            elements.push(element(document, node));
        }
    }
    elements
}

fn element(document: &roxmltree::Document, node: roxmltree::Node) -> Element {
    let tag = node.tag_name().name().to_string();
    let attr = |name: &str| node.attribute(name).unwrap_or("").to_string();
    let class = node.attribute("testclass").unwrap_or(&tag).to_string();
    let name = node
        .attribute("testname")
        .or_else(|| node.attribute("name"))
        .unwrap_or("")
        .to_string();
    Element {
        class,
        gui: attr("guiclass"),
        name,
        enabled: node.attribute("enabled") != Some("false"),
        line: document.text_pos_at(node.range().start).row,
        props: props(document, node),
        tag,
        children: Vec::new(),
    }
}

fn props(document: &roxmltree::Document, node: roxmltree::Node) -> Vec<(String, Prop)> {
    element_children(node)
        .filter_map(|child| prop(document, child))
        .collect()
}

fn prop(document: &roxmltree::Document, node: roxmltree::Node) -> Option<(String, Prop)> {
    let tag = node.tag_name().name();
    let text_of = |n: roxmltree::Node| n.text().unwrap_or("").to_string();
    // JMeter 2.x/3.x write some props as <doubleProp><name>..</name><value>..</value>.
    let named_child = |wanted: &str| element_children(node).find(|c| c.tag_name().name() == wanted);
    let name = node
        .attribute("name")
        .map(str::to_string)
        .or_else(|| named_child("name").map(text_of))
        .unwrap_or_default();
    let value = match tag {
        "stringProp" | "boolProp" | "intProp" | "longProp" | "floatProp" | "doubleProp" => {
            Prop::Text(named_child("value").map_or_else(|| text_of(node), text_of))
        }
        "elementProp" => Prop::Element(Box::new(element(document, node))),
        "collectionProp" => Prop::List(props(document, node)),
        _ => return None,
    };
    Some((name, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="Plan">
      <elementProp name="TestPlan.user_defined_variables" elementType="Arguments">
        <collectionProp name="Arguments.arguments">
          <elementProp name="host" elementType="Argument">
            <stringProp name="Argument.name">host</stringProp>
            <stringProp name="Argument.value">127.0.0.1</stringProp>
          </elementProp>
        </collectionProp>
      </elementProp>
    </TestPlan>
    <hashTree>
      <ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="Users" enabled="false">
        <doubleProp><name>x</name><value>2.5</value><savedValue>0.0</savedValue></doubleProp>
        <stringProp name="ThreadGroup.num_threads">5</stringProp>
      </ThreadGroup>
      <hashTree>
        <HTTPSamplerProxy testclass="HTTPSamplerProxy" testname="home"/>
        <hashTree/>
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>"#;

    #[test]
    fn elements_pair_with_their_hash_trees() {
        let top = parse_jmx("p.jmx", SMALL).unwrap();
        assert_eq!(top.len(), 1);
        let plan = &top[0];
        let vars = plan.element("TestPlan.user_defined_variables").unwrap();
        let Prop::Element(host) = &vars.list("Arguments.arguments")[0].1 else {
            panic!("an elementProp")
        };
        assert_eq!(host.text("Argument.value"), Some("127.0.0.1"));
        let group = &plan.children[0];
        assert_eq!(
            (group.class.as_str(), group.enabled),
            ("ThreadGroup", false)
        );
        assert_eq!(group.text("x"), Some("2.5"));
        assert_eq!(group.text("ThreadGroup.num_threads"), Some("5"));
        assert_eq!(group.children[0].name, "home");
        assert_eq!(group.children[0].line, 20);
    }

    #[test]
    fn other_files_are_refused_in_one_line() {
        let err = |text: &str| parse_jmx("x.jmx", text).unwrap_err().to_string();
        assert!(err("hello").starts_with("x.jmx: not a JMeter test plan: "));
        assert_eq!(
            err("<html><body/></html>"),
            "x.jmx: not a JMeter test plan: the root element is <html>, not <jmeterTestPlan>"
        );
        assert!(err("<jmeterTestPlan/>").contains("no <hashTree>"));
        assert!(!err("hello").contains('\n'));
    }
}
